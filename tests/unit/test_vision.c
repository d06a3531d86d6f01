/*
 * test_vision.c - a vision tower's weights, its image tokens, its FLOPs
 * and time in a prompt's prefill, and the encoder outputs vLLM holds
 * while it profiles, against counts worked by hand from the configs,
 * the processors' code (transformers image_processing_qwen2_vl.py
 * smart_resize, commit cb0fc56f; image_processing_llama4_fast.py
 * get_best_fit, commit 0331fb36; processing_llama4.py, commit 01ad83ad)
 * and vLLM's (vllm/v1/core/encoder_cache_manager.py,
 * compute_mm_encoder_budget, commit 003ad86e; vllm/v1/worker/utils.py,
 * MultiModalBudget._get_max_items, commit 0cac2462); the tower's
 * activation peak in vLLM's profile run; and what they do to a row:
 * taken before the KV budget, and added to ttft.
 */
#include "kv/fit.h"
#include "kv/params.h"
#include "kv/serve.h"
#include "kv/vision.h"
#include "test.h"
#include "tower_row.h"

#define GB 1000000000ULL

/*
 * Gemma 3 27B's SigLIP tower: 27 layers of width h 1,152, MLP f 4,304,
 * patches of 14 over 896 pixels (64 x 64 patches); text width 5,376.
 * A layer: q, k, v, o 4 (h^2 + h) = 5,313,024; fc1 and fc2 h f + f +
 * f h + h = 9,921,872; two LayerNorms 4h = 4,608; 15,239,504, x 27 =
 * 411,466,608. Patch embedding 3 x 14^2 x 1,152 + 1,152 = 678,528;
 * positions 4,096 x 1,152 = 4,718,592; final LayerNorm 2,304; projector
 * 1,152 x 5,376 + 1,152 = 6,194,304. Sum 423,060,336: with the text
 * model's 27,009,346,304 (kvfit --params) it is 27,432,406,640, the count
 * Keras Hub's preset gives the 27B with its tower. Gemma 3 4B's, the
 * same tower projected to 2,560: 419,816,304, with its text 3,880,263,168
 * Keras Hub's 4,300,079,472.
 */
static void gemma_params(void)
{
	struct kv_model *m = test_load("gemma-3-27b");
	struct kv_model *s = NULL;
	char err[KV_ERRLEN];
	if (m) {
		CHECK_U64(kv_vision_params(m), 423060336);
		CHECK_U64(kv_vision_tokens(m, 0, 0), 256);
		CHECK_U64(kv_vision_tokens(m, 1280, 720), 256);
		kv_model_free(m);
	}
	if (kv_model_load("tests/configs/gemma-3-4b-it.json", &s, err)) {
		fprintf(stderr, "load: %s\n", err);
		test_failures++;
		return;
	}
	CHECK_U64(kv_vision_params(s), 419816304);
	kv_model_free(s);
}

/*
 * vLLM's profile run holds max_items_per_batch encoder outputs of the
 * most tokens: items = max(1, min(budget / 256, seqs x per prompt)),
 * budget = max(max_num_batched_tokens, 256), per prompt = max(1,
 * min(images, max_model_len / 256)); each 5,376 bf16 values a token.
 * 8,192 batched: 32 images, 32 x 256 x 5,376 x 2 = 88,080,384 bytes; 8
 * sequences at once: 8 images, 22,020,096; 128 batched (below an
 * image's 256): one image; a context shorter than an image: one a
 * prompt.
 */
static void encoder(void)
{
	struct kv_model *m = test_load("gemma-3-27b");
	uint64_t items, bytes;
	if (!m)
		return;
	CHECK(kv_vision_encoder(m, KV_DTYPE_BF16, 1, 8192, 1024, 8192, &items,
				&bytes) == 0);
	CHECK_U64(items, 32);
	CHECK_U64(bytes, 88080384);
	CHECK(kv_vision_encoder(m, KV_DTYPE_BF16, 4, 8192, 1024, 8192, &items,
				&bytes) == 0);
	CHECK_U64(items, 32);
	CHECK(kv_vision_encoder(m, KV_DTYPE_BF16, 1, 8192, 8, 8192, &items,
				&bytes) == 0);
	CHECK_U64(items, 8);
	CHECK_U64(bytes, 22020096);
	CHECK(kv_vision_encoder(m, KV_DTYPE_BF16, 4, 8192, 8, 8192, &items,
				&bytes) == 0);
	CHECK_U64(items, 32);
	CHECK(kv_vision_encoder(m, KV_DTYPE_BF16, 4, 128, 1024, 8192, &items,
				&bytes) == 0);
	CHECK_U64(items, 1);
	CHECK_U64(bytes, 2752512);
	CHECK(kv_vision_encoder(m, KV_DTYPE_BF16, 4, 8192, 2, 100, &items,
				&bytes) == 0);
	CHECK_U64(items, 2);
	CHECK(kv_vision_encoder(m, KV_DTYPE_BF16, 0, 8192, 1024, 8192, &items,
				&bytes) == 0);
	CHECK_U64(items, 0);
	CHECK_U64(bytes, 0);
	kv_model_free(m);
}

/*
 * On a row: vLLM's free KV is less by the tower's bf16 weights
 * (846,120,672) and the encoder outputs (88,080,384 at its 8,192
 * batched tokens on an H100): 934,201,056 bytes. Over 2 ranks the tower
 * is split (423,060,336 each). Weights given as bytes (a checkpoint's
 * tensors) hold the tower already; a reserve given replaces the modelled
 * runtime, the encoder's outputs with it; the ideal engine profiles
 * nothing.
 */
static void row_effects(void)
{
	struct kv_model *m = test_load("gemma-3-27b");
	char err[KV_ERRLEN];
	struct kv_fit f0, f;
	if (!m)
		return;
	struct kv_fit_in in = row(m, VLLM, 0, 0);
	CHECK(kv_fit_solve(&in, &f0, err) == 0);
	CHECK_U64(f0.vision_weights, 0);
	in.images = 1;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.vision_weights, 846120672);
	CHECK_U64(f.encoder_items, 32);
	CHECK_U64(f.encoder_bytes, 88080384);
	CHECK_U64(f0.free_kv - f.free_kv, 934201056);
	in.tp = 2;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.vision_weights, 423060336);
	in.tp = 1;
	in.weights = 54864813280ULL;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.vision_weights, 0);
	CHECK_U64(f.encoder_bytes, 88080384);
	in.weights = 0;
	in.reserve = 4 * GB;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.encoder_bytes, 0);
	CHECK_U64(f.vision_weights, 846120672);
	in = row(m, IDEAL, 1, 0);
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.vision_weights, 846120672);
	CHECK_U64(f.encoder_bytes, 0);
	kv_model_free(m);
}

/* No tower, a tower not modelled (Mllama's cross-attention, LFM2-VL),
 * an image the processor refuses, an engine whose encoder memory is not
 * modelled: refused, naming the model. Llama 4, Qwen and SGLang are
 * modelled. */
static void refusals(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	char err[KV_ERRLEN];
	if (m) {
		struct kv_fit_in in = row(m, VLLM, 1, 0);
		CHECK(kv_vision_refuses(&in, err));
		CHECK_STR(err, "llama-3.1-8b: --images: the model has no "
			       "vision tower (no vision_config)");
		in.images = 0;
		CHECK(!kv_vision_refuses(&in, err));
		kv_model_free(m);
	}
	if ((m = test_load("llama-4-scout"))) {
		struct kv_fit_in in = row(m, VLLM, 1, 0);
		CHECK(!kv_vision_refuses(&in, err));
		kv_model_free(m);
	}
	m = test_load_path("tests/configs/llama-3.2-90b-vision-instruct.json");
	if (m) {
		struct kv_fit_in in = row(m, VLLM, 1, 0);
		CHECK(kv_vision_refuses(&in, err));
		CHECK_STR(err, "llama-3.2-90b-vision-instruct: --images: the "
			       "vision tower of MllamaForConditionalGeneration "
			       "is not modelled (Gemma 3's, Qwen2.5-VL's, "
			       "Qwen3-VL's and Llama 4's are)");
		CHECK_U64(kv_vision_tokens(m, 0, 0), 0);
		kv_model_free(m);
	}
	m = test_load_path("tests/configs/qwen2.5-vl-7b-instruct.json");
	if (m) {
		struct kv_fit_in in = row(m, VLLM, 1, 0);
		in.image_w = 20;
		in.image_h = 500;
		CHECK(kv_vision_refuses(&in, err));
		CHECK_STR(err, "qwen2.5-vl-7b-instruct: --image-size: 20x500: "
			       "a side below patch_size x spatial_merge_size "
			       "pixels (the processor's smart_resize refuses "
			       "it)");
		in.image_w = 28;
		in.image_h = 5880; /* 210 to 1 */
		CHECK(kv_vision_refuses(&in, err));
		CHECK_HAS(err, "sides more than 200 to 1");
		kv_model_free(m);
	}
	if ((m = test_load("gemma-3-27b"))) {
		struct kv_fit_in in = row(m, TRTLLM, 1, 0);
		CHECK(kv_vision_refuses(&in, err));
		CHECK_STR(err, "gemma-3-27b: --images: TensorRT-LLM's encoder "
			       "memory is not modelled (vLLM's, SGLang's and "
			       "the ideal engine's are)");
		in.server = SGLANG;
		CHECK(!kv_vision_refuses(&in, err));
		in.server = VLLM;
		CHECK(!kv_vision_refuses(&in, err));
		kv_model_free(m);
	}
}

/* vLLM's --limit-mm-per-prompt, both of its forms. */
static void limit_parse(void)
{
	uint64_t n = 99;
	char err[KV_ERRLEN];
	CHECK(kv_vision_vllm_limit_parse("{\"image\": 4}", &n, err) == 0);
	CHECK_U64(n, 4);
	CHECK(kv_vision_vllm_limit_parse("{\"image\": {\"count\": 2, "
					 "\"width\": 512}, \"video\": 0}",
					 &n, err) == 0);
	CHECK_U64(n, 2);
	CHECK(kv_vision_vllm_limit_parse("{}", &n, err) == 0);
	CHECK_U64(n, 0);
	CHECK(kv_vision_vllm_limit_parse("{\"video\": 1}", &n, err) ==
	      KV_EINVAL);
	CHECK(strstr(err, "video: only images") != NULL);
	CHECK(kv_vision_vllm_limit_parse("{\"image\": -1}", &n, err) ==
	      KV_EINVAL);
	CHECK(kv_vision_vllm_limit_parse("4", &n, err) == KV_EINVAL);
}

/*
 * Qwen2.5-VL 7B's tower: 32 layers of width h 1,280, gated MLP f 3,420,
 * RMSNorms. A layer: q, k, v, o 4 (h^2 + h) = 6,558,720; gate and up
 * 2 (h f + f) = 8,762,040; down f h + h = 4,378,880; two norms 2h =
 * 2,560: 19,702,200, x 32 = 630,470,400. Patch embedding 3 x 2 x 14^2 x
 * 1,280 = 1,505,280 (no bias). Merger: RMSNorm 1,280, 5,120^2 + 5,120 =
 * 26,219,520, 5,120 x 3,584 + 3,584 = 18,353,664: 44,574,464. Sum
 * 676,550,144, the visual module's count a training script prints for
 * Qwen/Qwen2.5-VL-7B-Instruct; with the text model's 7,615,616,512
 * (kvfit --params), 8,292,166,656, the hub's parameter count and its
 * index's total_size 16,584,333,312 in bf16.
 *
 * Its images (smart_resize, factor 28, 3,136 to 1,003,520 pixels): by
 * default the largest, floor(sqrt(1,003,520) / 28) x 28 = 980 a side,
 * 70 x 70 = 4,900 patches, 1,225 tokens; 1280 x 720 rounds to 1288 x
 * 728: 92 x 52 = 4,784 patches, 1,196 tokens; 70 x 700: 70 / 28 = 2.5
 * rounds to even, 56 (not 84): 4 x 50 = 200 patches, 50 tokens; 4000 x
 * 3000, over the pixels, scales by sqrt(12,000,000 / 1,003,520): 1148 x
 * 840, 4,920 patches, 1,230 tokens; 56 x 56: 4 tokens. Python's
 * smart_resize gives each.
 */
static void qwen25(void)
{
	struct kv_model *m =
		test_load_path("tests/configs/qwen2.5-vl-7b-instruct.json");
	struct kv_vision_image im;
	char err[KV_ERRLEN];
	if (!m)
		return;
	CHECK(m->vit_kind == KV_VIT_QWEN25);
	CHECK_U64(kv_vision_params(m), 676550144);
	CHECK(kv_vision_image(m, 0, 0, &im, err) == 0);
	CHECK_U64(im.width, 980);
	CHECK_U64(im.patches, 4900);
	CHECK_U64(im.tokens, 1225);
	CHECK(kv_vision_image(m, 1280, 720, &im, err) == 0);
	CHECK_U64(im.width, 1288);
	CHECK_U64(im.height, 728);
	CHECK_U64(im.patches, 4784);
	CHECK_U64(im.tokens, 1196);
	CHECK_U64(kv_vision_tokens(m, 70, 700), 50);
	CHECK(kv_vision_image(m, 4000, 3000, &im, err) == 0);
	CHECK_U64(im.width, 1148);
	CHECK_U64(im.height, 840);
	CHECK_U64(im.tokens, 1230);
	CHECK_U64(kv_vision_tokens(m, 56, 56), 4);
	CHECK_U64(kv_vision_tokens(m, 20, 500), 0);
	kv_model_free(m);
}

/*
 * Qwen3.5 9B's tower, Qwen3-VL's build without deepstack mergers: 27
 * layers of h 1,152, plain MLP f 4,304, LayerNorms: 15,239,504 a layer
 * (as SigLIP's), 411,466,608; patch embedding 3 x 2 x 16^2 x 1,152 +
 * 1,152 = 1,770,624; 2,304 positions x 1,152 = 2,654,208; merger
 * LayerNorm 2,304, 4,608^2 + 4,608 = 21,238,272, 4,608 x 4,096 + 4,096 =
 * 18,878,464: 40,119,040. Sum 456,010,480. Its largest image (factor
 * 32): 992 a side, 62^2 = 3,844 patches, 961 tokens.
 */
static void qwen3(void)
{
	struct kv_model *m = test_load_path("tests/configs/qwen3.5-9b.json");
	if (!m)
		return;
	CHECK(m->vit_kind == KV_VIT_QWEN3);
	CHECK_U64(kv_vision_params(m), 456010480);
	CHECK_U64(kv_vision_tokens(m, 0, 0), 961);
	kv_model_free(m);
}

/*
 * Qwen3-VL 8B, its config's shape fields (Qwen/Qwen3-VL-8B-Instruct:
 * Qwen3-8B's text model, the tower as Qwen3.5's with out_hidden_size
 * 4,096 and three deepstack mergers, each normed over 4,608: 2 x 4,608 +
 * 21,238,272 + 18,878,464 = 40,125,952): 456,010,480 + 3 x 40,125,952 =
 * 576,388,336; with the text model's 8,190,735,360, 8,767,123,696, the
 * hub's safetensors total (BF16 8,767,123,696).
 */
static void qwen3_deepstack(void)
{
	static const char cfg[] =
		"{\"model_type\": \"qwen3_vl\", \"text_config\": {"
		"\"model_type\": \"qwen3_vl_text\", \"hidden_size\": 4096, "
		"\"intermediate_size\": 12288, \"num_hidden_layers\": 36, "
		"\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
		"\"head_dim\": 128, \"vocab_size\": 151936, "
		"\"tie_word_embeddings\": false, \"dtype\": \"bfloat16\"}, "
		"\"vision_config\": {\"model_type\": \"qwen3_vl\", "
		"\"depth\": 27, \"hidden_size\": 1152, "
		"\"intermediate_size\": 4304, \"num_heads\": 16, "
		"\"out_hidden_size\": 4096, \"patch_size\": 16, "
		"\"spatial_merge_size\": 2, \"temporal_patch_size\": 2, "
		"\"num_position_embeddings\": 2304, "
		"\"deepstack_visual_indexes\": [8, 16, 24]}}";
	struct kv_model *m = NULL;
	struct kv_params p;
	char err[KV_ERRLEN];
	if (kv_model_parse(cfg, sizeof cfg - 1, "qwen3-vl-8b", &m, err)) {
		fprintf(stderr, "parse: %s\n", err);
		test_failures++;
		return;
	}
	CHECK(m->vit_kind == KV_VIT_QWEN3);
	CHECK_U64(m->vit_deepstack, 3);
	CHECK_U64(kv_vision_params(m), 576388336);
	CHECK(kv_model_params(m, &p, err) == 0);
	CHECK_U64(p.total + kv_vision_params(m), 8767123696ULL);
	kv_model_free(m);
}

/*
 * Llama 4 Scout's tower: 34 layers of h 1,408, plain MLP f 5,632,
 * LayerNorms: 4 (h^2 + h) = 7,935,488, fc1 7,935,488, fc2 7,931,264,
 * norms 5,632: 23,807,872, x 34 = 809,467,648. Patch embedding 588 x
 * 1,408 = 827,904; class token 1,408; 577 positions 812,416; the two
 * LayerNorms 5,632; adapter 5,632 x 4,096 + 4,096^2 = 39,845,888;
 * projector 4,096 x 5,120 = 20,971,520. Sum 871,932,416; with the text
 * model's 107,769,861,120 (kvfit --params), 108,641,793,536, the hub's
 * count for meta-llama/Llama-4-Scout-17B-16E-Instruct.
 *
 * Its images (get_best_fit over canvases of up to 16 tiles of 336): 336
 * x 336, one tile: 3 + 144 = 147 tokens; 1280 x 720: the least scale of
 * at least 1 is 1.05 (3 x 4 and 4 x 4 tiles), the lesser area 3 high, 4
 * wide: 12 tiles and the global one, 3 + 13 x 144 + 12 = 1,887 tokens;
 * 200 x 1000: 3 high, 1 wide, 582; by default 4 x 4: 2,467. Python's
 * get_best_fit and _prompt_split_image give each.
 */
static void llama4(void)
{
	struct kv_model *m = test_load("llama-4-scout");
	struct kv_vision_image im;
	char err[KV_ERRLEN];
	if (!m)
		return;
	CHECK(m->vit_kind == KV_VIT_LLAMA4);
	CHECK_U64(kv_vision_params(m), 871932416);
	CHECK_U64(kv_vision_tokens(m, 336, 336), 147);
	CHECK(kv_vision_image(m, 1280, 720, &im, err) == 0);
	CHECK_U64(im.tiles_h, 3);
	CHECK_U64(im.tiles_w, 4);
	CHECK_U64(im.passes, 13);
	CHECK_U64(im.patches, 577);
	CHECK_U64(im.tokens, 1887);
	CHECK(kv_vision_image(m, 200, 1000, &im, err) == 0);
	CHECK_U64(im.tiles_h, 3);
	CHECK_U64(im.tiles_w, 1);
	CHECK_U64(im.tokens, 582);
	CHECK(kv_vision_image(m, 0, 0, &im, err) == 0);
	CHECK_U64(im.passes, 17);
	CHECK_U64(im.tokens, 2467);
	kv_model_free(m);
}

/*
 * Gemma 3 27B's SigLIP on one 896-pixel image: 4,096 patches, h 1,152,
 * f 4,304, 27 layers. Patch embedding 2 x 4,096 x 3 x 14^2 x 1,152 =
 * 5,549,064,192; a layer's products 2 x 4,096 x (4 h^2 + 2 h f) = 8,192
 * x 15,224,832 = 124,721,823,744, x 27 = 3,367,489,241,088; the
 * projector on the 256 pooled tokens 2 x 256 x 1,152 x 5,376 =
 * 3,170,893,824: 3,376,209,199,104 in products. Attention 4 x 4,096^2 x
 * 1,152 = 77,309,411,328 a layer, x 27 = 2,087,354,105,856. Over tp 2,
 * half of each.
 *
 * Its time at the datasheet's rates at half their peak (1,000 TFLOP/s x
 * 0.5, 3,350 GB/s): 3.376e12 / 5e14 = 6.752418 ms of products (the
 * tower's 846,120,672 bf16 bytes read in 0.253 ms, shorter), attention
 * 2.087e12 / 5e14 = 4.174708 ms: 10.927126 ms an image, 21.854252 for
 * two; one user's ttft grows by it, the prompt otherwise the same.
 */
static void encoder_time(void)
{
	struct kv_model *m = test_load("gemma-3-27b");
	struct kv_vision_image im;
	struct kv_vision_flops fl;
	struct kv_serve s0, s2;
	char err[KV_ERRLEN];
	if (!m)
		return;
	CHECK(kv_vision_image(m, 0, 0, &im, err) == 0);
	CHECK_U64(im.patches, 4096);
	kv_vision_flops(m, &im, 1, &fl);
	CHECK_NEAR(fl.linear, 3376209199104.0, 1);
	CHECK_NEAR(fl.attn, 2087354105856.0, 1);
	CHECK_U64(fl.rows, 4096);
	CHECK_U64(fl.seq, 4096);
	kv_vision_flops(m, &im, 2, &fl);
	CHECK_NEAR(fl.linear, 1688104599552.0, 1);
	struct kv_fit_in in = timed_row(m);
	struct kv_serve_in w = tower_work();
	CHECK(kv_serve_solve(&in, &w, &s0, err) == 0);
	CHECK_NEAR(s0.encoder.ms, 0, 0);
	in.images = 2;
	CHECK(kv_serve_solve(&in, &w, &s2, err) == 0);
	CHECK_NEAR(s2.encoder.ms, 21.854252, 1e-5);
	CHECK_NEAR(s2.encoder.flops, 2 * 5463563304960.0, 1);
	CHECK_NEAR(s2.ttft_ms - s0.ttft_ms, 21.854252, 1e-5);
	CHECK_NEAR(s2.prefill.ms - s0.prefill.ms, 21.854252, 1e-5);
	w.arrivals = KV_ARRIVE_BURST;
	CHECK(kv_serve_solve(&in, &w, &s2, err) == KV_EINVAL);
	CHECK_HAS(err, "--arrivals burst with --images");
	kv_model_free(m);
}

/*
 * The tower's activation peak while vLLM's profile encodes its items of
 * the largest image at once (kv_vision_peak): pixel values in float32
 * and, at a layer's MLP, rows x (2 h + inner) 16-bit values. Gemma 3
 * 27B, 32 images: 32 x 3 x 896^2 x 4 = 308,281,344 bytes of pixels;
 * 131,072 patches x (2 x 1,152 + 2 x 4,304) x 2 = 2,860,515,328:
 * 3,168,796,672. Qwen2.5-VL 7B, 6 images of 4,900 patches: 29,400 x
 * 1,176 x 4 = 138,297,600 and 29,400 x (2 x 1,280 + 3 x 3,420) x 2 =
 * 753,816,000: 892,113,600. Llama 4 Scout over tp 2, 3 images of 17
 * passes of 577: 3 x 17 x 3 x 336^2 x 4 = 69,092,352 and 29,427 x (2 x
 * 1,408 + 2 x 5,632 / 2) x 2 = 497,198,592: 566,290,944.
 *
 * On a row: vLLM with 8 sequences runs its sampler over 8 rows, so its
 * profile's peak is the text model's pass (1,233,125,376) and the 32
 * images' outputs (88,080,384) but for the tower's 3,168,796,672, which
 * passes them by 1,847,590,912: free KV less by that beside the tower's
 * weights and outputs. With 1,024 sequences the sampler's 3,759,013,888
 * is the larger and the tower changes nothing.
 */
static void tower_peak(void)
{
	struct kv_model *m = test_load("gemma-3-27b");
	struct kv_model *q =
		test_load_path("tests/configs/qwen2.5-vl-7b-instruct.json");
	struct kv_model *l = test_load("llama-4-scout");
	struct kv_fit f0, f;
	char err[KV_ERRLEN];
	CHECK_U64(kv_vision_peak(q, 6, 1), 892113600ULL);
	CHECK_U64(kv_vision_peak(q, 0, 1), 0);
	if (l)
		CHECK_U64(kv_vision_peak(l, 3, 2), 566290944ULL);
	if (m) {
		CHECK_U64(kv_vision_peak(m, 32, 1), 3168796672ULL);
		struct kv_fit_in in = row(m, VLLM, 0, 0);
		in.max_seqs = 8;
		CHECK(kv_fit_solve(&in, &f0, err) == 0);
		in.images = 4;
		CHECK(kv_fit_solve(&in, &f, err) == 0);
		CHECK_U64(f.encoder_items, 32);
		CHECK_U64(f.encoder_peak, 3168796672ULL);
		CHECK_U64(f0.free_kv - f.free_kv,
			  846120672ULL + 88080384 + 1847590912ULL);
		in.max_seqs = 0;
		in.images = 0;
		CHECK(kv_fit_solve(&in, &f0, err) == 0);
		in.images = 1;
		CHECK(kv_fit_solve(&in, &f, err) == 0);
		CHECK_U64(f0.free_kv - f.free_kv, 934201056);
	}
	kv_model_free(m);
	kv_model_free(q);
	kv_model_free(l);
}

int main(void)
{
	limit_parse();
	gemma_params();
	encoder();
	row_effects();
	refusals();
	qwen25();
	qwen3();
	qwen3_deepstack();
	llama4();
	encoder_time();
	tower_peak();
	return test_done("vision");
}
