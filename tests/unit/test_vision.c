/*
 * test_vision.c - a vision tower's weights, its image tokens and the
 * encoder outputs vLLM holds while it profiles, against counts worked by
 * hand from the configs and vLLM's code (vllm/v1/core/
 * encoder_cache_manager.py, compute_mm_encoder_budget, commit 003ad86e;
 * vllm/v1/worker/utils.py, MultiModalBudget._get_max_items, commit
 * 0cac2462); and what they do to a row: taken before the KV budget.
 */
#include "kv/fit.h"
#include "kv/vision.h"
#include "test.h"

#define VLLM kv_server_get(KV_SERVER_VLLM)
#define SGLANG kv_server_get(KV_SERVER_SGLANG)
#define IDEAL kv_server_get(KV_SERVER_IDEAL)
#define GB 1000000000ULL

static struct kv_fit_in row(const struct kv_model *m,
			    const struct kv_server *sv, uint64_t images)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_BF16,
				  .w_dtype = KV_DTYPE_BF16, .mem = 80 * GB,
				  .runtime = true, .tp = 1, .pp = 1,
				  .ctx = 8192, .server = sv, .gpu = "h100",
				  .images = images};
}

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
		CHECK_U64(kv_vision_tokens(m), 256);
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
	struct kv_fit_in in = row(m, VLLM, 0);
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
	in = row(m, IDEAL, 1);
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.vision_weights, 846120672);
	CHECK_U64(f.encoder_bytes, 0);
	kv_model_free(m);
}

/* No tower, image tokens not modelled (Llama 4's tiles), an engine whose
 * encoder memory is not modelled: refused, naming the model. */
static void refusals(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	char err[KV_ERRLEN];
	if (m) {
		struct kv_fit_in in = row(m, VLLM, 1);
		CHECK(kv_vision_refuses(&in, err));
		CHECK_STR(err, "llama-3.1-8b: --images: the model has no "
			       "vision tower (no vision_config)");
		in.images = 0;
		CHECK(!kv_vision_refuses(&in, err));
		kv_model_free(m);
	}
	if ((m = test_load("llama-4-scout"))) {
		struct kv_fit_in in = row(m, VLLM, 1);
		CHECK(kv_vision_refuses(&in, err));
		CHECK_U64(kv_vision_tokens(m), 0);
		kv_model_free(m);
	}
	if ((m = test_load("gemma-3-27b"))) {
		struct kv_fit_in in = row(m, SGLANG, 1);
		CHECK(kv_vision_refuses(&in, err));
		CHECK_STR(err, "gemma-3-27b: --images: SGLang's encoder memory "
			       "is not modelled (vLLM's and the ideal "
			       "engine's are)");
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

int main(void)
{
	limit_parse();
	gemma_params();
	encoder();
	row_effects();
	refusals();
	return test_done("vision");
}
