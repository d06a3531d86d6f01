/*
 * vision.h - what a vision-language model adds beside its KV cache when
 * its requests carry images: the vision tower's weights (derived from
 * vision_config where the checkpoint's bytes are not read), the tokens
 * each image takes in the prompt (as the model's image processor sizes
 * it), the tower's FLOPs and time in each prompt's prefill, and the
 * encoder outputs vLLM holds while it profiles its memory (taken before
 * its KV budget). kvfit(1), IMAGES, derives each term and cites the
 * engine's and the processor's code.
 */
#ifndef KV_VISION_H
#define KV_VISION_H

#include <stdbool.h>
#include <stdint.h>

#include "fit.h"
#include "model.h"

/* Whether in's images (in->images; false without them) are refused: a
 * model with no vision tower, one whose tower is not modelled (enum
 * kv_vit: Gemma 3's SigLIP, Qwen2.5-VL's, Qwen3-VL's, Llama 4's are), an
 * image its processor refuses (kv_vision_image), an engine whose encoder
 * memory is not modelled (TensorRT-LLM, llama.cpp). True with the reason
 * in err (KV_ERRLEN bytes). */
bool kv_vision_refuses(const struct kv_fit_in *in, char *err);

/* One image as m's processor sizes it and its tower runs it. */
struct kv_vision_image {
	uint32_t width, height; /* pixels the tower sees, after the
				   processor's resize (Llama 4: the
				   canvas of its tiles) */
	uint32_t tiles_w, tiles_h; /* Llama 4: the canvas in tiles; 1, 1 */
	uint64_t passes;        /* the tower's passes: Llama 4's tiles and,
				   where more than one, its global tile; 1 */
	uint64_t patches;       /* the tower's sequence a pass: its
				   patches (and Llama 4's class token) */
	uint64_t tokens;        /* tokens the image takes in the prompt */
};

/* An image of w x h pixels (0, 0: the largest m's processor keeps, the
 * one vLLM profiles with) as m's processor sizes it, into *out: Gemma
 * 3's at its fixed image_size whatever is given; Qwen's resized to
 * multiples of patch x merge within [px_min, px_max]
 * (transformers' smart_resize); Llama 4's on the canvas of tiles its
 * get_best_fit picks. Returns 0, or KV_EINVAL with err ("--image-size:
 * ...") for a model whose tower is not modelled or an image its
 * processor refuses. */
int kv_vision_image(const struct kv_model *m, uint32_t w, uint32_t h,
		    struct kv_vision_image *out, char *err);

/* The tokens one image of w x h takes in the prompt (kv_vision_image);
 * 0 where m's tower is not modelled or the processor refuses it. */
uint64_t kv_vision_tokens(const struct kv_model *m, uint32_t w,
			  uint32_t h);

/* The vision tower's and its projector's parameters, derived from
 * vision_config as the model's code builds it (kvfit(1), IMAGES): per
 * layer its attention and MLP with their biases and norms, the patch
 * embedding, learned positions, the projector (Gemma 3's, Qwen's merger,
 * Llama 4's adapter and projector). 0 where the tower is not modelled or
 * vision_config lacks intermediate_size or patch_size. */
uint64_t kv_vision_params(const struct kv_model *m);

/* The tower's work on one image im of m, one GPU's share of tp. */
struct kv_vision_flops {
	double linear; /* FLOPs of its products: the patch embedding, each
			  layer's projections and MLP, the projector */
	double attn;   /* FLOPs of attention's scores and weighted sums
			  over each pass's patches (a window's, on
			  Qwen2.5-VL's windowed layers) */
	uint64_t rows; /* rows its products run at: the patches of all
			  passes */
	uint64_t seq;  /* attention's longest sequence: patches a pass */
};

/* Into *out, the FLOPs of m's tower on image im, split over tp ranks
 * (the engines shard its linear layers as the text model's). */
void kv_vision_flops(const struct kv_model *m,
		     const struct kv_vision_image *im, uint32_t tp,
		     struct kv_vision_flops *out);

/* The encoder outputs vLLM's profile run holds (gpu_model_runner.py
 * profile_run) for items of tok tokens each, count a prompt: items =
 * max(1, min(budget / tok, seqs x per prompt)), budget = max(batched,
 * tok) (encoder_cache_size), per prompt = max(1, min(count, max_len /
 * tok)); each token the text model's hidden values of m in t (the
 * model's dtype as the engine runs it). Into *items and *bytes (0, 0
 * with count 0). Returns 0, KV_EINVAL for tok 0, or KV_ERANGE. */
int kv_mm_encoder(const struct kv_model *m, enum kv_dtype t, uint64_t tok,
		  uint64_t count, uint64_t batched, uint64_t seqs,
		  uint64_t max_len, uint64_t *items, uint64_t *bytes);

/* kv_mm_encoder for images: items images of the most tokens (the largest
 * image, kv_vision_image at 0, 0), images a prompt. Returns 0, KV_EINVAL
 * for a model with no image tokens, or KV_ERANGE. */
int kv_vision_encoder(const struct kv_model *m, enum kv_dtype t,
		      uint64_t images,
		      uint64_t batched, uint64_t seqs, uint64_t max_len,
		      uint64_t *items, uint64_t *bytes);

/* The vision tower's activation peak on one rank of tp while it encodes
 * items images of the largest size in one call, as vLLM's profile run
 * does (kvfit(1), IMAGES): their pixel values, in float32 as the
 * processor hands them over, and at each layer's MLP, the residual and
 * its norm (2 x width) and the MLP's inner values (Qwen2.5's gate, up and
 * activation, 3 x its width / tp; the others' fc1 and activation, 2 x
 * its width / tp) over every patch of every pass, in 16 bits. 0 where
 * the tower is not modelled. */
uint64_t kv_vision_peak(const struct kv_model *m, uint64_t items,
			uint32_t tp);

/* vLLM's --limit-mm-per-prompt JSON ({"image": 4}, or {"image":
 * {"count": 4}}; vllm/config/multimodal.py limit_per_prompt), the images
 * a prompt may carry, which its profile run sizes the encoder by: the
 * image count into *images (0 without one). Another modality of a count
 * above 0 is refused. Returns 0, or KV_EINVAL with err naming the field. */
int kv_vision_vllm_limit_parse(const char *json, uint64_t *images,
			       char *err);
/* --image-size's value, WxH in pixels (1280x720), each side 1 to 65,536,
 * into *w and *h. Returns 0 or KV_EINVAL. */
int kv_vision_size_parse(const char *s, uint32_t *w, uint32_t *h);

#endif
