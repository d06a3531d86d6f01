/*
 * place.h - llama.cpp's split of a model between the GPU and host
 * memory: which layers its -ngl puts on the GPU, which tensors its
 * --override-tensor (-ot), --cpu-moe and --n-cpu-moe keep in host memory,
 * and what a step then costs on each side and across the link between
 * them. The rules are llama.cpp's (server_llamacpp.c cites them); the
 * tensors are a GGUF's own where it lists them, else the names its
 * converter gives a config's layers.
 *
 * A place (struct kv_place) is the -ot rules read against one model's
 * tensors, once; kv_fit_solve() reads it for every row of the model.
 */
#ifndef KV_PLACE_H
#define KV_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv.h"
#include "model.h"

/* -ngl's words: every layer and the output head on the GPU (all, or a
 * count above the layers), or llama.cpp's --fit (auto). */
#define KV_NGL_ALL (-1)
#define KV_NGL_AUTO (-2)
#define KV_NGL_UNSET (-3) /* not given: all, or an Ollama model's num_gpu */

/* The most -ot rules kept. */
#define KV_OT_MAX 64

/* One -ot rule: tensors whose name the pattern finds (a regular
 * expression, searched anywhere in the name, as llama.cpp's std::regex_search
 * does) go to host memory (CPU) or to the GPU. */
struct kv_ot {
	char pattern[256];
	char buft[16]; /* as given: CPU, CUDA0, ... */
	bool host;
};

/* Parses one -ot value, "PATTERN=BUFT[,PATTERN=BUFT...]", appending its
 * rules to rules[*n] (at most KV_OT_MAX): BUFT is CPU (host memory) or
 * the GPU's buffer (CUDA0, ROCm0, Vulkan0, SYCL0, MUSA0, CANN0, MTL0 or
 * Metal). Returns 0, or KV_EINVAL with err saying what is wrong (no '=',
 * an empty pattern, an unknown buffer type, a pattern that is not a
 * regular expression, too many rules). */
int kv_ot_parse(const char *s, struct kv_ot *rules, size_t *n, char *err);

/* What the rules move of one slot: the input (token embeddings), a
 * decoder layer, or the output (final norm and head). */
struct kv_slot {
	/* from a GGUF's tensors (exact), bytes: */
	uint64_t bytes;        /* the slot's tensors */
	uint64_t routed;       /* of them, the routed experts' (names of
				  llama.cpp's LLM_FFN_EXPS_REGEX) */
	uint64_t host, host_routed; /* of bytes, what a rule keeps in host
				  memory, and of that the experts' */
	uint64_t gpu, gpu_routed; /* of bytes, what a rule puts on the GPU */
	uint64_t largest;      /* its largest tensor a product reads */
	uint64_t largest_host; /* of the tensors a rule keeps in host
				  memory, the largest */
	uint64_t largest_routed; /* the largest of the experts' tensors */
	/* from the counts (no tensors listed): of the routed experts' bytes,
	 * the shares the rules move (each expert tensor, gate, up or down,
	 * its own part) */
	double host_share, gpu_share;
};

/* The -ot rules read against one model. */
struct kv_place {
	bool exact;            /* slots from a GGUF's tensors; else shares of
				  the counts (only the experts' tensors may
				  be moved) */
	uint32_t n_layers;
	struct kv_slot *slot;  /* n_layers + 2: [0] the input, [1 + i]
				  layer i, [n_layers + 1] the output */
	uint64_t tied;         /* exact, a GGUF without output.weight: the
				  token embedding's bytes, which llama.cpp
				  copies to the GPU as the head (0 else) */
	size_t matched[KV_OT_MAX]; /* tensors each rule moved */
};

/*
 * Reads rules[0..n) against m's tensors into p: a GGUF's own (m->gguf
 * and tensors listed in its header), else the names llama.cpp's converter
 * gives m's layers (blk.N.attn_q.weight, blk.N.ffn_up_exps.weight, ...),
 * of which a rule may find the experts' alone. The first rule that finds
 * a tensor places it. Returns 0; KV_EINVAL with err for a rule that finds
 * a tensor other than the experts' where no tensors are listed (naming
 * it), KV_EIO for a GGUF that cannot be read again; KV_ENOMEM. Free with
 * kv_place_free.
 */
int kv_place_init(struct kv_place *p, const struct kv_model *m,
		  const struct kv_ot *rules, size_t n, char *err);

void kv_place_free(struct kv_place *p);

/* What a row asks of the split (kv_fit_in.off). */
struct kv_ngl {
	bool on;              /* a split is asked: rows count the GPU's part
				 and the host's (below); false: every weight
				 on the GPU, the rest unset */
	uint32_t gpu_layers;  /* -ngl: the last gpu_layers decoder layers
				 on the GPU; above the layers, the output
				 head too */
	uint32_t moe_host;    /* --n-cpu-moe: the first moe_host layers'
				 routed experts in host memory (--cpu-moe:
				 every layer's) */
	bool no_kv_offload;   /* -nkvo: every layer's KV in host memory */
	const struct kv_place *place; /* the -ot rules on the model; NULL:
				 none */
	bool exact;           /* the place's bytes are the row's weights (a
				 GGUF's tensors, weights_source gguf); else
				 the counts' */
	uint64_t host_mem;    /* host memory, bytes; 0: unknown */
	double host_gbps;     /* host memory bandwidth, 10^9 B/s, > 0 */
	double host_tflops;   /* host FLOP rate, 10^12/s; 0: unknown (its
				 part is timed by its bytes) */
	double link_gbps;     /* the GPU's link to the host, one direction,
				 10^9 B/s, > 0 */
};

/* llama.cpp's smallest batch whose products on host weights run on the
 * GPU, the weights copied over the link (ggml-cuda.cu,
 * ggml_backend_cuda_device_offload_op: op_offload_min_batch_size, 32
 * unless $GGML_OP_OFFLOAD_MIN_BATCH says otherwise). */
#define KV_NGL_BATCH 32

/* Bytes of one token's hidden state crossing the link: llama.cpp's
 * graphs carry the residual stream in float32 (4 bytes a value). */
#define KV_NGL_ACT 4

/* A step's host part: what it reads and computes in host memory, and
 * what its tokens send across the link. */
struct kv_ngl_step {
	double tokens;       /* tokens of the step */
	double host_bytes;   /* host weights and KV the step reads */
	double host_flops;   /* FLOPs of the host's layers */
	double link_bytes;   /* its tokens' hidden states at each crossing,
				and the logits the GPU's head sends back */
};

/*
 * The host's part of a step and the link's, ms, under o: a step of fewer
 * than KV_NGL_BATCH tokens runs the host's layers in host memory
 * (host_bytes at host_gbps, or host_flops at host_tflops where longer);
 * a larger one runs them on the GPU, host_bytes crossing the link
 * (llama.cpp's op offload: their FLOPs are the GPU's then, *on_gpu set).
 * Either way link_bytes cross at link_gbps.
 */
void kv_ngl_ms(const struct kv_ngl *o, const struct kv_ngl_step *s,
		   double *host_ms, double *link_ms, bool *on_gpu);

#endif
