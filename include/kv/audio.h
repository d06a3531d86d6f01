/*
 * audio.h - what an audio-language model adds beside its KV cache when
 * its requests carry audio: the audio tower's weights (derived from
 * audio_config where the checkpoint's bytes are not read), the tokens a
 * clip takes in the prompt (as the model's feature extractor and its
 * encoder's convolutions and pooling count them), the tower's FLOPs and
 * time in each prompt's prefill, and the encoder outputs vLLM holds
 * while it profiles its memory. kvfit(1), AUDIO, derives each term and
 * cites the engine's and the model's code.
 */
#ifndef KV_AUDIO_H
#define KV_AUDIO_H

#include <stdbool.h>
#include <stdint.h>

#include "fit.h"
#include "model.h"
#include "vision.h"

/* Whether in's audio (in->audio_s; false without it) is refused: a model
 * with no audio tower, one whose tower is not modelled (enum kv_aud:
 * Qwen2-Audio's and Voxtral's are), a clip the model does not take
 * (kv_audio_clip), an engine whose
 * audio is not modelled (SGLang, TensorRT-LLM, llama.cpp). True with the
 * reason in err (KV_ERRLEN bytes). */
bool kv_audio_refuses(const struct kv_fit_in *in, char *err);

/* One clip as m's feature extractor cuts it and its tower runs it. */
struct kv_audio_clip {
	uint64_t chunks;    /* the tower's passes: 30-s chunks, each padded
			       to a whole chunk (Qwen2.5-Omni: the clip) */
	uint64_t frames;    /* mel frames a pass (3,000; Qwen2.5-Omni: the
			       clip's own) */
	uint64_t positions; /* the tower's sequence a pass: its frames after
			       the second convolution (1,500) */
	uint64_t window;    /* positions attention spans (Qwen2.5-Omni's
			       n_window); 0: the whole pass */
	uint64_t rows;      /* rows the projector runs at, a pass: the
			       pooled (Qwen2-Audio, 750) or stacked
			       (Voxtral, 375) positions */
	uint64_t tokens;    /* tokens the clip takes in the prompt */
	double kept_s;      /* of the clip, the seconds the tower hears:
			       Qwen2-Audio's and Qwen2.5-Omni's first 30
			       (their feature extractor truncates a longer
			       one), else all of it */
};

/* A clip of s seconds (s > 0) as m's tower takes it, into *out:
 * Qwen2-Audio's one chunk of at most 30 s (a longer clip truncated to
 * its first 30, kept_s), its tokens from the frames the clip fills (Qwen2.5-Omni's alike, its tower on those frames
 * alone); Voxtral's whole 30-s chunks. Returns 0, or KV_EINVAL
 * with err ("--audio-seconds: ...") for a model whose tower is not
 * modelled or a clip it does not take. */
int kv_audio_clip(const struct kv_model *m, double s,
		  struct kv_audio_clip *out, char *err);

/* The tokens one clip of s seconds takes in the prompt (kv_audio_clip);
 * 0 where m's tower is not modelled or the clip is refused. */
uint64_t kv_audio_tokens(const struct kv_model *m, double s);

/* The audio tower's and its projector's parameters, derived from
 * audio_config as the model's code builds it (kvfit(1), AUDIO): the two
 * convolutions with biases, the learned positions, per layer q, k, v, o
 * (k without a bias), the MLP with biases and two LayerNorms, the final
 * LayerNorm; Qwen2-Audio's linear projector with a bias, Voxtral's two
 * without; Qwen2.5-Omni's with sinusoidal positions (no weights), its
 * projector to output_dim with a bias and its two marker embeddings. 0
 * where the tower is not modelled. */
uint64_t kv_audio_params(const struct kv_model *m);

/* Into *out, the FLOPs of m's tower on clip c, split over tp ranks (the
 * fields as kv_vision_flops's: rows are the positions of all passes,
 * seq a pass's). */
void kv_audio_flops(const struct kv_model *m, const struct kv_audio_clip *c,
		    uint32_t tp, struct kv_vision_flops *out);

/* The encoder outputs vLLM's profile run holds for audio
 * (kv_mm_encoder): items of the most tokens an item may take
 * (Qwen2-Audio, Qwen2.5-Omni: a 30-s clip's, qwen2_audio.py and
 * qwen2_5_omni_thinker.py get_mm_max_tokens_per_item; Voxtral: max_len,
 * voxtral.py get_max_audio_tokens), one a prompt. Into *items and *bytes. Returns
 * 0, KV_EINVAL for a tower not modelled, or KV_ERANGE. */
int kv_audio_encoder(const struct kv_model *m, enum kv_dtype t,
		     uint64_t batched, uint64_t seqs, uint64_t max_len,
		     uint64_t *items, uint64_t *bytes);

/* A request's towers in in, each one GPU's share of in->tp: into
 * out[0] the vision tower's FLOPs on in->images images (rows all their
 * passes'), into out[1] the audio tower's on in->audio_s's clip
 * (kv_audio_flops), and their parameters into params[0] and params[1];
 * zeros for a tower the request does not use or a size refused. */
void kv_towers_flops(const struct kv_fit_in *in,
		     struct kv_vision_flops out[2], uint64_t params[2]);

#endif
