/*
 * vision.c - the vision tower of a vision-language model, as a serving
 * engine sizes it: its weights, the tokens an image takes in the prompt
 * and the encoder outputs vLLM holds while it measures its memory. What
 * an engine models of images is its row's (server.h, vision); the
 * arithmetic is here.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"

#include "kv/server.h"
#include "kv/vision.h"

bool kv_vision_refuses(const struct kv_fit_in *in, char *err)
{
	const struct kv_model *m = in->m;
	if (!in->images)
		return false;
	if (!m->vision) {
		snprintf(err, KV_ERRLEN, "%s: --images: the model has no "
			 "vision tower (no vision_config)", m->name);
		return true;
	}
	if (!kv_vision_tokens(m) || !kv_vision_params(m)) {
		snprintf(err, KV_ERRLEN, "%s: --images: the image tokens of "
			 "model_type %s are not modelled (a config's "
			 "mm_tokens_per_image only, as Gemma 3's)", m->name,
			 m->model_type[0] ? m->model_type : "(none)");
		return true;
	}
	if (in->server && !in->server->vision) {
		snprintf(err, KV_ERRLEN, "%s: --images: %s's encoder memory "
			 "is not modelled (vLLM's and the ideal engine's are)",
			 m->name, in->server->label);
		return true;
	}
	return false;
}

uint64_t kv_vision_tokens(const struct kv_model *m)
{
	return m->vision ? m->mm_tokens : 0;
}

uint64_t kv_vision_params(const struct kv_model *m)
{
	if (!m->vision || !m->vit_ffn || !m->vit_patch || !m->vit_image)
		return 0;
	uint64_t h = m->vit_hidden, f = m->vit_ffn, p = m->vit_patch;
	uint64_t side = m->vit_image / p;
	/* q, k, v, o with biases; fc1, fc2 with biases; two LayerNorms */
	uint64_t layer = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h;
	uint64_t patch = m->vit_channels * p * p * h + h;
	uint64_t pos = side * side * h;
	uint64_t post = 2 * h;
	/* the projector into the text model's width, and its norm */
	uint64_t proj = h * m->hidden + h;
	return m->vit_layers * layer + patch + pos + post + proj;
}

int kv_vision_encoder(const struct kv_model *m, enum kv_dtype t,
		      uint64_t images,
		      uint64_t batched, uint64_t seqs, uint64_t max_len,
		      uint64_t *items, uint64_t *bytes)
{
	uint64_t tok = kv_vision_tokens(m), row;
	*items = *bytes = 0;
	if (!tok)
		return KV_EINVAL;
	if (!images)
		return 0;
	/* encoder_cache_size = max(max_num_batched_tokens, tokens) */
	uint64_t budget = batched > tok ? batched : tok;
	uint64_t per_prompt = max_len / tok < images ? max_len / tok : images;
	if (per_prompt < 1)
		per_prompt = 1;
	uint64_t by_budget = budget / tok, by_seqs;
	if (kv_mul(seqs, per_prompt, &by_seqs))
		by_seqs = UINT64_MAX;
	uint64_t n = by_budget < by_seqs ? by_budget : by_seqs;
	*items = n < 1 ? 1 : n;
	int e = kv_dtype_row_bytes(t, m->hidden, &row);
	if (e || (e = kv_mul(*items, tok, bytes)) ||
	    (e = kv_mul(*bytes, row, bytes)))
		return e;
	return 0;
}

int kv_vision_vllm_limit_parse(const char *json, uint64_t *images, char *err)
{
	const char *opt = "--limit-mm-per-prompt";
	cJSON *o = NULL, *it;
	uint64_t n = 0;
	int e = kv_json_read(json, strlen(json), opt, &o, err);
	if (e)
		return e;
	e = cJSON_IsObject(o) ? 0 : kv_fail(err, opt, "must be a JSON object");
	cJSON_ArrayForEach(it, o)
	{
		/* a count, or {"count": N, ...} (vLLM's dict form) */
		const cJSON *c = cJSON_IsObject(it)
			? cJSON_GetObjectItemCaseSensitive(it, "count")
			: it;
		uint64_t v;
		if (e)
			break;
		if (!c || !kv_json_whole(c, 1ULL << 20, &v))
			e = kv_fail(err, opt, "%s: must be a count", it->string);
		else if (!strcmp(it->string, "image"))
			n = v;
		else if (v)
			e = kv_fail(err, opt, "%s: only images are modelled, "
				    "got %llu", it->string,
				    (unsigned long long)v);
	}
	if (!e)
		*images = n;
	cJSON_Delete(o);
	return e;
}
