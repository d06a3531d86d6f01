/*
 * model_vision.c - how a vision tower is built and how its image
 * processor sizes an image, as vision_config and preprocessor_config.json
 * say: what vision.h needs to derive the tower's weights, an image's
 * tokens and the tower's FLOPs. A tower it does not know is left
 * KV_VIT_NONE (refused by name where images are asked).
 */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "model_int.h"

/* Entries of list field `name` of v (0 where absent). */
static int list_len(struct cfg *v, const char *name, uint32_t *n)
{
	const cJSON *it;
	int e = cfg_kind(v, name, K_LIST, &it);
	*n = it ? (uint32_t)cJSON_GetArraySize(it) : 0;
	return e;
}

/* Qwen's tower (transformers Qwen2_5_VLVisionConfig, Qwen3VLVisionConfig):
 * depth, spatial_merge_size 2, temporal_patch_size 2, out_hidden_size
 * (0 where absent: the text model's width), in_chans or in_channels 3;
 * Qwen2.5's window_size 112 and fullatt_block_indexes, Qwen3's
 * num_position_embeddings 2304 and deepstack_visual_indexes. The
 * processor's defaults (image_processing_qwen2_vl.py, commit cb0fc56f):
 * 56 x 56 to 28 x 28 x 1,280 pixels. */
static int read_qwen(struct cfg *v, struct kv_model *m)
{
	static const char *const chans[] = {"in_chans", "in_channels", NULL};
	uint64_t c;
	int e;
	if ((e = cfg_u32(v, "depth", false, m->vit_depth, 1, MAX_LAYERS,
			 &m->vit_depth)) ||
	    (e = cfg_u32(v, "spatial_merge_size", false, 2, 1, 64,
			 &m->vit_merge)) ||
	    (e = cfg_u32(v, "temporal_patch_size", false, 2, 1, 64,
			 &m->vit_temporal)) ||
	    (e = cfg_uint(v, "out_hidden_size", false, 0, 1, MAX_HIDDEN,
			  &m->vit_out)) ||
	    (e = cfg_uint_any(v, chans, false, m->vit_channels, 1, 64, &c)))
		return e;
	m->vit_channels = (uint32_t)c;
	if (m->vit_kind == KV_VIT_QWEN25 &&
	    ((e = cfg_u32(v, "window_size", false, 112, 1, 1u << 16,
			  &m->vit_window)) ||
	     (e = list_len(v, "fullatt_block_indexes", &m->vit_full))))
		return e;
	if (m->vit_kind == KV_VIT_QWEN3 &&
	    ((e = cfg_u32(v, "num_position_embeddings", false, 2304, 1,
			  1u << 24, &m->vit_pos)) ||
	     (e = list_len(v, "deepstack_visual_indexes",
			   &m->vit_deepstack))))
		return e;
	m->px_min = 56 * 56;
	m->px_max = 28 * 28 * 1280;
	return 0;
}

/* Llama 4's (transformers Llama4VisionConfig): pixel_shuffle_ratio 0.5,
 * projector_input_dim and projector_output_dim 4,096. Its processor's
 * defaults (image_processing_llama4_fast.py, commit 0331fb36): tiles of
 * image_size (336) pixels, 16 at most. */
static int read_llama4(struct cfg *v, struct kv_model *m)
{
	int e;
	if ((e = cfg_double(v, "pixel_shuffle_ratio", 0.5, &m->vit_shuffle)) ||
	    (e = cfg_uint(v, "projector_input_dim", false, 4096, 1,
			  MAX_HIDDEN, &m->vit_proj_in)) ||
	    (e = cfg_uint(v, "projector_output_dim", false, 4096, 1,
			  MAX_HIDDEN, &m->vit_out)))
		return e;
	if (!(m->vit_shuffle > 0 && m->vit_shuffle <= 1))
		return cfg_fail(v, "pixel_shuffle_ratio: must be in (0, 1], "
				"got %g", m->vit_shuffle);
	m->px_tile = m->vit_image ? m->vit_image : 336;
	m->px_tiles = 16;
	return 0;
}

int model_vision_read(struct cfg *c, struct cfg *v, struct kv_model *m)
{
	static const char *const qwen3[] = {"qwen3_vl", "qwen3_vl_moe",
					    "qwen3_5", "qwen3_5_moe", NULL};
	/* the wrapper's model_type, not its text_config's (llama4_text) */
	struct cfg top = *c;
	const char *type = NULL;
	int e;
	top.text = top.root;
	top.text_name = NULL;
	if ((e = cfg_str(&top, "model_type", &type)))
		return e;
	type = type ? type : "";
	if (cfg_has(v, "num_hidden_layers"))
		m->vit_depth = m->vit_layers;
	if (m->mm_tokens)
		m->vit_kind = KV_VIT_SIGLIP;
	else if (!strcmp(type, "qwen2_5_vl"))
		m->vit_kind = KV_VIT_QWEN25;
	else if (cfg_one_of(type, qwen3))
		m->vit_kind = KV_VIT_QWEN3;
	else if (!strcmp(type, "llama4"))
		m->vit_kind = KV_VIT_LLAMA4;
	switch (m->vit_kind) {
	case KV_VIT_QWEN25:
	case KV_VIT_QWEN3: return read_qwen(v, m);
	case KV_VIT_LLAMA4: return read_llama4(v, m);
	default: return 0;
	}
}

/* preprocessor_config.json's fields over the processor's defaults: Qwen's
 * min_pixels and max_pixels (or size's shortest_edge and longest_edge,
 * as transformers reads them), Llama 4's size.height and max_patches. */
static int preprocessor(struct cfg *p, struct kv_model *m)
{
	struct cfg size;
	bool has;
	int e;
	if ((e = cfg_nested(p, "size", &size, &has)))
		return e;
	if (m->vit_kind == KV_VIT_LLAMA4) {
		if (has && (e = cfg_u32(&size, "height", false, m->px_tile, 1,
					1u << 16, &m->px_tile)))
			return e;
		return cfg_u32(p, "max_patches", false, m->px_tiles, 1, 1024,
			       &m->px_tiles);
	}
	if (has && ((e = cfg_uint(&size, "shortest_edge", false, m->px_min,
				  1, 1ULL << 40, &m->px_min)) ||
		    (e = cfg_uint(&size, "longest_edge", false, m->px_max, 1,
				  1ULL << 40, &m->px_max))))
		return e;
	if ((e = cfg_uint(p, "min_pixels", false, m->px_min, 1, 1ULL << 40,
			  &m->px_min)) ||
	    (e = cfg_uint(p, "max_pixels", false, m->px_max, 1, 1ULL << 40,
			  &m->px_max)))
		return e;
	if (m->px_min > m->px_max)
		return cfg_fail(p, "min_pixels: must be at most max_pixels "
				"(%llu), got %llu",
				(unsigned long long)m->px_max,
				(unsigned long long)m->px_min);
	return 0;
}

int read_preprocessor_beside(struct kv_model *m, const char *config_path,
			     char *err)
{
	if (m->vit_kind != KV_VIT_QWEN25 && m->vit_kind != KV_VIT_QWEN3 &&
	    m->vit_kind != KV_VIT_LLAMA4)
		return 0;
	return cfg_read_beside(config_path, "preprocessor_config.json",
			       1 << 20, preprocessor, m, err);
}
