/*
 * vision.c - the vision tower of a vision-language model, as a serving
 * engine sizes it: its weights, the tokens an image takes in the prompt
 * (as the model's image processor resizes or tiles it), the tower's
 * FLOPs on an image and the encoder outputs vLLM holds while it measures
 * its memory. What an engine models of images is its row's (server.h,
 * vision); the arithmetic is here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"

#include "kv/server.h"
#include "kv/vision.h"

bool kv_vision_refuses(const struct kv_fit_in *in, char *err)
{
	const struct kv_model *m = in->m;
	struct kv_vision_image im;
	char why[KV_ERRLEN];
	if (!in->images)
		return false;
	if (!m->vision) {
		snprintf(err, KV_ERRLEN, "%s: --images: the model has no "
			 "vision tower (no vision_config)", m->name);
		return true;
	}
	if (m->vit_kind == KV_VIT_NONE || !kv_vision_params(m)) {
		snprintf(err, KV_ERRLEN, "%s: --images: the vision tower of "
			 "%s is not modelled (Gemma 3's, Qwen2.5-VL's, "
			 "Qwen3-VL's and Llama 4's are)", m->name,
			 kv_model_class(m));
		return true;
	}
	if (kv_vision_image(m, in->image_w, in->image_h, &im, why)) {
		snprintf(err, KV_ERRLEN, "%s: %.500s", m->name, why);
		return true;
	}
	if (in->server && !in->server->vision) {
		snprintf(err, KV_ERRLEN, "%s: --images: %s's encoder memory "
			 "is not modelled (vLLM's, SGLang's and the ideal "
			 "engine's are)", m->name, in->server->label);
		return true;
	}
	return false;
}

/*
 * Qwen's resize (transformers, models/qwen2_vl/
 * image_processing_qwen2_vl.py, smart_resize, commit cb0fc56f): each side
 * rounded to a multiple of f = patch x merge (Python's round: halves to
 * even, as rint), then, where the pixels pass px_max or fall below
 * px_min, both sides scaled by the square root of the ratio, down
 * (floor) or up (ceil) to multiples of f. A side below f or a ratio of
 * the sides above 200 it refuses. With no size, the largest it keeps:
 * vLLM's profile asks it of a 9,999,999-pixel square (qwen2_vl.py,
 * get_image_size_with_most_features), floor(sqrt(px_max) / f) x f a side.
 */
static int qwen_resize(const struct kv_model *m, uint32_t w, uint32_t h,
		       struct kv_vision_image *out, char *err)
{
	double f = (double)m->vit_patch * m->vit_merge;
	double hb, wb;
	if (!w || !h) {
		hb = wb = floor(sqrt((double)m->px_max) / f) * f;
	} else {
		double hi = w > h ? w : h, lo = w > h ? h : w;
		if (lo < f || hi / lo > 200) {
			snprintf(err, KV_ERRLEN, "--image-size: %ux%u: %s "
				 "(the processor's smart_resize refuses it)",
				 w, h, lo < f ? "a side below patch_size x "
					       "spatial_merge_size pixels"
					     : "sides more than 200 to 1");
			return KV_EINVAL;
		}
		hb = rint(h / f) * f;
		wb = rint(w / f) * f;
		if (hb * wb > (double)m->px_max) {
			double beta = sqrt((double)h * w / (double)m->px_max);
			hb = floor(h / beta / f) * f;
			wb = floor(w / beta / f) * f;
		} else if (hb * wb < (double)m->px_min) {
			double beta = sqrt((double)m->px_min / ((double)h * w));
			hb = ceil(h * beta / f) * f;
			wb = ceil(w * beta / f) * f;
		}
	}
	hb = hb < f ? f : hb;
	wb = wb < f ? f : wb;
	out->height = (uint32_t)hb;
	out->width = (uint32_t)wb;
	out->passes = 1;
	out->patches = (uint64_t)(hb / m->vit_patch) *
		       (uint64_t)(wb / m->vit_patch);
	out->tokens = out->patches / ((uint64_t)m->vit_merge * m->vit_merge);
	return 0;
}

/* The scale canvas a x b tiles gives an image of w x h: its smaller
 * side's ratio, so that the image fits undistorted. */
static double canvas_scale(const struct kv_model *m, uint32_t a, uint32_t b,
			   uint32_t w, uint32_t h)
{
	double sh = (double)a * m->px_tile / h, sw = (double)b * m->px_tile / w;
	return sh > sw ? sw : sh;
}

/*
 * Llama 4's tiles (transformers, models/llama4/
 * image_processing_llama4_fast.py, find_supported_resolutions and
 * get_best_fit, commit 0331fb36): every canvas of a x b tiles of px_tile
 * pixels with a b <= px_tiles; each scales the image by the smaller of
 * its sides' ratios; the least scale of at least 1 wins (no resize to
 * the largest canvas), else the largest below 1; among equals, the least
 * area. The image is resized into it and padded to it. With no size, the
 * largest square canvas.
 */
static void llama4_canvas(const struct kv_model *m, uint32_t w, uint32_t h,
			  uint32_t *tw, uint32_t *th)
{
	uint32_t n = m->px_tiles ? m->px_tiles : 1;
	double up = INFINITY, down = 0, pick;
	if (!w || !h) {
		uint32_t s = (uint32_t)floor(sqrt((double)n));
		*tw = *th = s ? s : 1;
		return;
	}
	for (uint32_t a = 1; a <= n; a++)
		for (uint32_t b = 1; a * b <= n; b++) {
			double s = canvas_scale(m, a, b, w, h);
			if (s >= 1 && s < up)
				up = s;
			if (s < 1 && s > down)
				down = s;
		}
	pick = isinf(up) ? down : up;
	*th = *tw = n + 1; /* the least area at that scale */
	for (uint32_t a = 1; a <= n; a++)
		for (uint32_t b = 1; a * b <= n; b++)
			if (canvas_scale(m, a, b, w, h) == pick &&
			    (uint64_t)a * b < (uint64_t)*th * *tw) {
				*th = a;
				*tw = b;
			}
}

/*
 * Llama 4's image in the prompt (transformers, models/llama4/
 * processing_llama4.py, _prompt_split_image, commit 01ad83ad): per tile
 * (px_tile / patch)^2 patches pixel-shuffled by ratio r into r^2 as many
 * tokens (144); with more than one tile, each row of tiles, a separator
 * between tiles and one after the row; then the global tile (image) and
 * its tokens, between image_start and image_end. The tower runs each tile
 * and the global one with its class token.
 */
static void llama4_image(const struct kv_model *m, uint32_t w, uint32_t h,
			 struct kv_vision_image *out)
{
	uint32_t tw, th;
	llama4_canvas(m, w, h, &tw, &th);
	uint64_t side = m->px_tile / m->vit_patch, tiles = (uint64_t)tw * th;
	uint64_t per = (uint64_t)llround((double)(side * side) *
					 m->vit_shuffle * m->vit_shuffle);
	out->tiles_w = tw;
	out->tiles_h = th;
	out->width = tw * m->px_tile;
	out->height = th * m->px_tile;
	out->passes = tiles > 1 ? tiles + 1 : 1;
	out->patches = side * side + 1;
	out->tokens = 3 + out->passes * per + (tiles > 1 ? tiles : 0);
}

int kv_vision_image(const struct kv_model *m, uint32_t w, uint32_t h,
		    struct kv_vision_image *out, char *err)
{
	*out = (struct kv_vision_image){.tiles_w = 1, .tiles_h = 1,
					.passes = 1};
	switch (m->vision && m->vit_patch ? m->vit_kind : KV_VIT_NONE) {
	case KV_VIT_SIGLIP: /* resized to image_size whatever it was */
		out->width = out->height = m->vit_image;
		out->patches = (uint64_t)(m->vit_image / m->vit_patch) *
			       (m->vit_image / m->vit_patch);
		out->tokens = m->mm_tokens;
		return 0;
	case KV_VIT_QWEN25:
	case KV_VIT_QWEN3:
		return qwen_resize(m, w, h, out, err);
	case KV_VIT_LLAMA4:
		llama4_image(m, w, h, out);
		return 0;
	case KV_VIT_NONE: break;
	}
	snprintf(err, KV_ERRLEN, "--image-size: the model's image processor "
		 "is not modelled");
	return KV_EINVAL;
}

uint64_t kv_vision_tokens(const struct kv_model *m, uint32_t w, uint32_t h)
{
	struct kv_vision_image im;
	char err[KV_ERRLEN];
	return kv_vision_image(m, w, h, &im, err) ? 0 : im.tokens;
}

/* A ViT layer of width h and MLP f: q, k, v, o with biases, the MLP's
 * matrices with biases (3 gated, 2 plain), two norms (LayerNorm's weight
 * and bias, or RMSNorm's weight). */
static uint64_t vit_layer(uint64_t h, uint64_t f, bool gated, bool rms)
{
	uint64_t mlp = gated ? 2 * (h * f + f) + (f * h + h)
			     : (h * f + f) + (f * h + h);
	return 4 * (h * h + h) + mlp + (rms ? 2 * h : 4 * h);
}

/*
 * Gemma 3's SigLIP (transformers siglip, gemma3 Gemma3MultiModalProjector):
 * its layers, the patch embedding (c x p^2 x h and a bias), one learned
 * position per patch, the final LayerNorm; the projector into the text
 * model's width and its RMSNorm.
 */
static uint64_t siglip_params(const struct kv_model *m)
{
	uint64_t h = m->vit_hidden, p = m->vit_patch, side;
	side = m->vit_image / p;
	return m->vit_depth * vit_layer(h, m->vit_ffn, false, false) +
	       m->vit_channels * p * p * h + h + side * side * h + 2 * h +
	       h * m->hidden + h;
}

/*
 * Qwen's tower (transformers qwen2_5_vl and qwen3_vl modeling, vLLM
 * qwen2_5_vl.py and qwen3_vl.py): the patch embedding a Conv3d over c x
 * temporal x p^2 (Qwen3's with a bias); its layers, Qwen2.5's gated with
 * RMSNorms, Qwen3's plain with LayerNorms; Qwen3's learned positions; the
 * merger: a norm over h (RMSNorm, or LayerNorm), then m^2 h to m^2 h and
 * m^2 h to out, with biases; Qwen3's deepstack mergers alike, normed over
 * m^2 h.
 */
static uint64_t qwen_params(const struct kv_model *m)
{
	bool q3 = m->vit_kind == KV_VIT_QWEN3;
	uint64_t h = m->vit_hidden, p = m->vit_patch;
	uint64_t mh = h * m->vit_merge * m->vit_merge;
	uint64_t patch = m->vit_channels * m->vit_temporal * p * p * h +
			 (q3 ? h : 0);
	uint64_t out = m->vit_out ? m->vit_out : m->hidden;
	uint64_t mlp = (mh * mh + mh) + (mh * out + out);
	uint64_t merger = (q3 ? 2 * h : h) + mlp;
	uint64_t deep = m->vit_deepstack * (2 * mh + mlp);
	return m->vit_depth * vit_layer(h, m->vit_ffn, !q3, !q3) + patch +
	       (q3 ? (uint64_t)m->vit_pos * h : 0) + merger + deep;
}

/*
 * Llama 4's (transformers llama4 Llama4VisionModel, vLLM mllama4.py): the
 * patch embedding (an unfold and c p^2 x h, no bias), the class token,
 * a learned position for it and each patch, the LayerNorms before and
 * after; its layers (LayerNorms, plain GELU MLP); the adapter after the
 * pixel shuffle (f x proj_in, proj_in x out, no biases); the projector
 * (out x the text width, no bias).
 */
static uint64_t llama4_params(const struct kv_model *m)
{
	uint64_t h = m->vit_hidden, p = m->vit_patch;
	uint64_t side = m->vit_image / p;
	return m->vit_channels * p * p * h + h + (side * side + 1) * h +
	       4 * h + m->vit_depth * vit_layer(h, m->vit_ffn, false, false) +
	       m->vit_ffn * m->vit_proj_in + m->vit_proj_in * m->vit_out +
	       m->vit_out * m->hidden;
}

uint64_t kv_vision_params(const struct kv_model *m)
{
	if (!m->vision || !m->vit_ffn || !m->vit_patch || !m->vit_depth)
		return 0;
	switch (m->vit_kind) {
	case KV_VIT_SIGLIP: return m->vit_image ? siglip_params(m) : 0;
	case KV_VIT_QWEN25:
	case KV_VIT_QWEN3: return qwen_params(m);
	case KV_VIT_LLAMA4: return m->vit_image ? llama4_params(m) : 0;
	case KV_VIT_NONE: break;
	}
	return 0;
}

/*
 * Two FLOPs a weight a row, attention's scores and weighted sum 4 s h a
 * row over s keys. Per pass of n patches: the patch embedding (c
 * (temporal) p^2 x h a patch), each layer's 4 h^2 projections and its
 * MLP (2 or 3 h f) and attention over the pass (Qwen2.5's windowed
 * layers over a window's (window / patch)^2 patches); then the
 * projector: Gemma 3's on its pooled tokens, Qwen's merger(s) on the
 * merged rows, Llama 4's adapter and projector on the shuffled ones.
 */
void kv_vision_flops(const struct kv_model *m,
		     const struct kv_vision_image *im, uint32_t tp,
		     struct kv_vision_flops *out)
{
	double n = (double)im->patches, h = (double)m->vit_hidden;
	double f = (double)m->vit_ffn, p2 = (double)m->vit_patch * m->vit_patch;
	double L = m->vit_depth, ch = m->vit_channels, lin, att, proj;
	bool gated = m->vit_kind == KV_VIT_QWEN25;
	lin = L * 2 * n * (4 * h * h + (gated ? 3 : 2) * h * f);
	att = L * 4 * n * n * h;
	switch (m->vit_kind) {
	case KV_VIT_SIGLIP:
		lin += 2 * n * ch * p2 * h;
		proj = 2.0 * (double)im->tokens * h * (double)m->hidden;
		break;
	case KV_VIT_QWEN25:
	case KV_VIT_QWEN3: {
		double mm = (double)m->vit_merge * m->vit_merge, mh = mm * h;
		double mergers = 1 + (m->vit_kind == KV_VIT_QWEN3
					      ? m->vit_deepstack
					      : 0);
		lin += 2 * n * ch * m->vit_temporal * p2 * h;
		double ow = (double)(m->vit_out ? m->vit_out : m->hidden);
		proj = mergers * 2 * (n / mm) * (mh * mh + mh * ow);
		if (m->vit_window && m->vit_full < m->vit_depth) {
			double wp = (double)m->vit_window / m->vit_patch;
			double win = wp * wp < n ? wp * wp : n;
			att = (double)m->vit_full * 4 * n * n * h +
			      (L - m->vit_full) * 4 * n * win * h;
		}
		break;
	}
	case KV_VIT_LLAMA4: {
		double s = (n - 1) * m->vit_shuffle * m->vit_shuffle;
		double pi = (double)m->vit_proj_in, po = (double)m->vit_out;
		lin += 2 * (n - 1) * ch * p2 * h;
		proj = 2 * s * (f * pi + pi * po + po * (double)m->hidden);
		break;
	}
	default:
		proj = 0;
	}
	double k = (double)im->passes / (tp ? tp : 1);
	out->linear = k * (lin + proj);
	out->attn = k * att;
	out->rows = im->passes * im->patches;
	out->seq = im->patches;
}

/*
 * At a layer's MLP (vLLM siglip.py SiglipMLP, mllama4.py
 * Llama4VisionMLP: fc1, then the activation into a tensor of its own;
 * qwen2_5_vl.py Qwen2_5_VisionMLP: gate_up_proj, then SiluAndMul's),
 * the block's input and its norm are held beside them. Attention's
 * transients (Qwen's rotary copies of q and k) are not counted, as the
 * text model's forward pass (fit_forward_bytes) does not count its own.
 */
uint64_t kv_vision_peak(const struct kv_model *m, uint64_t items,
			uint32_t tp)
{
	struct kv_vision_image im;
	char err[KV_ERRLEN];
	if (!items || !kv_vision_params(m) ||
	    kv_vision_image(m, 0, 0, &im, err))
		return 0;
	double inner = (m->vit_kind == KV_VIT_QWEN25 ? 3.0 : 2.0) *
		       (double)m->vit_ffn / (tp ? tp : 1);
	double rows = (double)items * (double)im.passes * (double)im.patches;
	double px = m->vit_kind == KV_VIT_QWEN25 || m->vit_kind == KV_VIT_QWEN3
			    ? rows * m->vit_channels * m->vit_temporal *
				      m->vit_patch * m->vit_patch
			    : (double)items * (double)im.passes *
				      m->vit_channels * (im.height / im.tiles_h) *
				      (im.width / im.tiles_w);
	double b = px * 4 + rows * (2.0 * (double)m->vit_hidden + inner) * 2;
	return b < 0x1p62 ? (uint64_t)b : (uint64_t)0x1p62;
}

int kv_mm_encoder(const struct kv_model *m, enum kv_dtype t, uint64_t tok,
		  uint64_t count, uint64_t batched, uint64_t seqs,
		  uint64_t max_len, uint64_t *items, uint64_t *bytes)
{
	uint64_t row;
	*items = *bytes = 0;
	if (!tok)
		return KV_EINVAL;
	if (!count)
		return 0;
	/* encoder_cache_size = max(max_num_batched_tokens, tokens) */
	uint64_t budget = batched > tok ? batched : tok;
	uint64_t per_prompt = max_len / tok < count ? max_len / tok : count;
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

int kv_vision_encoder(const struct kv_model *m, enum kv_dtype t,
		      uint64_t images,
		      uint64_t batched, uint64_t seqs, uint64_t max_len,
		      uint64_t *items, uint64_t *bytes)
{
	return kv_mm_encoder(m, t, kv_vision_tokens(m, 0, 0), images, batched,
			     seqs, max_len, items, bytes);
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

int kv_vision_size_parse(const char *s, uint32_t *w, uint32_t *h)
{
	char *end;
	unsigned long a, b;
	if (!s || *s < '0' || *s > '9')
		return KV_EINVAL;
	a = strtoul(s, &end, 10);
	if (*end != 'x' || end[1] < '0' || end[1] > '9')
		return KV_EINVAL;
	b = strtoul(end + 1, &end, 10);
	if (*end || !a || !b || a > 65536 || b > 65536)
		return KV_EINVAL;
	*w = (uint32_t)a;
	*h = (uint32_t)b;
	return 0;
}
