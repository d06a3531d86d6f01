/*
 * vision.h - what a vision-language model adds beside its KV cache when
 * its requests carry images: the vision tower's weights (derived from
 * vision_config where the checkpoint's bytes are not read), the tokens
 * each image takes in the prompt, and the encoder outputs vLLM holds
 * while it profiles its memory (taken before its KV budget). kvfit(1),
 * IMAGES, derives each term and cites the engine's code.
 */
#ifndef KV_VISION_H
#define KV_VISION_H

#include <stdbool.h>
#include <stdint.h>

#include "fit.h"
#include "model.h"

/* Whether in's images (in->images; false without them) are refused: a
 * model with no vision tower, one whose image tokens are not modelled
 * (only a config's mm_tokens_per_image is: Gemma 3), an engine whose
 * encoder memory is not modelled (SGLang, TensorRT-LLM, llama.cpp). True
 * with the reason in err (KV_ERRLEN bytes). */
bool kv_vision_refuses(const struct kv_fit_in *in, char *err);

/* The tokens one image takes in the prompt (mm_tokens_per_image); 0
 * where m gives none. */
uint64_t kv_vision_tokens(const struct kv_model *m);

/* The vision tower's and its projector's parameters, derived from
 * vision_config as a ViT (SigLIP) is built: per layer q, k, v, o (h x h
 * and a bias each), the MLP's two matrices (h x f, f x h, their biases)
 * and two LayerNorms (4h); the patch embedding (c x p^2 x h and a bias),
 * one learned position per patch ((image / patch)^2 x h), the final
 * LayerNorm (2h); the projector into the text model (h x hidden) and
 * its RMSNorm (h). 0 where vision_config lacks intermediate_size,
 * patch_size or image_size. */
uint64_t kv_vision_params(const struct kv_model *m);

/* The encoder outputs vLLM's profile run holds (gpu_model_runner.py
 * profile_run): items images of the most tokens, items = max(1,
 * min(budget / tokens, seqs x per prompt)), budget = max(batched,
 * tokens) (encoder_cache_size), per prompt = max(1, min(images, max_len
 * / tokens)); each token the text model's hidden values in t (the
 * model's dtype as the engine runs it). Into *items and *bytes. Returns
 * 0, KV_EINVAL for a model with no image tokens, or KV_ERANGE. */
int kv_vision_encoder(const struct kv_model *m, enum kv_dtype t,
		      uint64_t images,
		      uint64_t batched, uint64_t seqs, uint64_t max_len,
		      uint64_t *items, uint64_t *bytes);

/* vLLM's --limit-mm-per-prompt JSON ({"image": 4}, or {"image":
 * {"count": 4}}; vllm/config/multimodal.py limit_per_prompt), the images
 * a prompt may carry, which its profile run sizes the encoder by: the
 * image count into *images (0 without one). Another modality of a count
 * above 0 is refused. Returns 0, or KV_EINVAL with err naming the field. */
int kv_vision_vllm_limit_parse(const char *json, uint64_t *images,
			       char *err);

#endif
