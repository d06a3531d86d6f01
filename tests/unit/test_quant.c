/*
 * test_quant.c - weights as quantized checkpoints store them: one matrix
 * per format, worked by hand from the tensors vLLM's loaders create for it
 * (vllm/model_executor/layers/quantization: fp8.py Fp8LinearMethod,
 * mxfp4.py GptOssMxfp4MoEMethod, auto_awq.py, auto_gptq.py,
 * compressed_tensors_wNa16.py, bitsandbytes.py) or mlx's QuantizedLinear
 * makes (mlx/ops.cpp affine_quantize, fp_quantize), the ignore lists' and
 * MLX's per-module entries' matching, ModelOpt's hf_quant_config.json,
 * and whole checkpoints against their published index.
 */
#include "kv/layout.h"
#include "kv/params.h"
#include "kv/quant.h"
#include "test.h"

static uint64_t bytes(const struct kv_quant *q, const char *name, bool expert,
		      uint64_t k, uint64_t n)
{
	uint64_t b = 0;
	CHECK(kv_quant_matrix_bytes(q, name, expert, k, n, KV_DTYPE_BF16,
				    &b) == 0);
	return b;
}

static void formats(void)
{
	/* DeepSeek-V3's q_a_proj, 7168 -> 1536, fp8 in blocks of 128 x 128:
	 * 1536 x 7168 bytes and a float32 weight_scale_inv of 12 x 56 */
	struct kv_quant fp8 = {.fmt = KV_QUANT_FP8, .bits = 8, .block_n = 128,
			       .block_k = 128};
	CHECK_U64(bytes(&fp8, "model.layers.0.self_attn.q_a_proj", false, 7168,
			1536),
		  11010048 + 12 * 56 * 4);
	/* per tensor: one float32 scale; static activations one more */
	struct kv_quant pt = {.fmt = KV_QUANT_FP8, .bits = 8};
	CHECK_U64(bytes(&pt, "x", false, 4096, 1024), 4194304 + 4);
	pt.input_scale = true;
	CHECK_U64(bytes(&pt, "x", false, 4096, 1024), 4194304 + 8);

	/* gpt-oss-20b's expert gate, 2880 -> 2880, mxfp4: two values a byte
	 * (2880 x 1440) and an e8m0 byte per 32 (2880 x 90); its attention
	 * stays bf16 */
	struct kv_quant mx = {.fmt = KV_QUANT_MXFP4, .bits = 4,
			      .experts_only = true};
	CHECK_U64(bytes(&mx, "model.layers.0.mlp.experts.gate_proj", true,
			2880, 2880),
		  4147200 + 259200);
	CHECK_U64(bytes(&mx, "model.layers.0.self_attn.q_proj", false, 2880,
			4096),
		  2880ULL * 4096 * 2);

	/* AWQ 4-bit, group 128, 4096 -> 4096: qweight 4096 x 512 int32,
	 * qzeros 32 x 512 int32, scales 32 x 4096 fp16 */
	struct kv_quant awq = {.fmt = KV_QUANT_AWQ, .bits = 4, .group = 128,
			       .zeros = true};
	CHECK_U64(bytes(&awq, "x", false, 4096, 4096),
		  8388608 + 65536 + 262144);
	/* GPTQ the same, qweight 512 x 4096 int32, and g_idx 4096 int32 */
	struct kv_quant gptq = awq;
	gptq.fmt = KV_QUANT_GPTQ;
	gptq.g_idx = true;
	CHECK_U64(bytes(&gptq, "x", false, 4096, 4096),
		  8388608 + 65536 + 262144 + 16384);
	/* one scale per row (group_size -1): G = 1 */
	gptq.group = 0;
	CHECK_U64(bytes(&gptq, "x", false, 4096, 4096),
		  8388608 + 512 * 4 + 4096 * 2 + 16384);

	/* compressed-tensors W4A16, group 128, symmetric: weight_packed
	 * 4096 x 512 int32, weight_scale 4096 x 32 bf16, weight_shape 2 int64 */
	struct kv_quant ct = {.fmt = KV_QUANT_CT_INT, .bits = 4, .group = 128,
			      .packed = true, .scale_bytes = 2};
	CHECK_U64(bytes(&ct, "x", false, 4096, 4096), 8388608 + 262144 + 16);
	ct.zeros = true; /* asymmetric: zero points 512 x 32 int32 */
	CHECK_U64(bytes(&ct, "x", false, 4096, 4096),
		  8388608 + 262144 + 16 + 65536);

	/* bitsandbytes nf4 with double quantization, 4096 x 4096: 2^23 bytes
	 * of values, 2^18 blocks of 64 (a byte each), 1024 float32 second
	 * scales, the 256-entry code and its offset, the 16-entry map */
	struct kv_quant nf4 = {.fmt = KV_QUANT_BNB4, .bits = 4,
			       .double_quant = true};
	CHECK_U64(bytes(&nf4, "x", false, 4096, 4096),
		  8388608 + 64 + 262144 + 4096 + 1028);
	nf4.double_quant = false; /* a float32 absmax per block */
	CHECK_U64(bytes(&nf4, "x", false, 4096, 4096),
		  8388608 + 64 + 262144 * 4);
}

static void ignores(void)
{
	const char *list[] = {"model.layers.*.self_attn", "lm_head",
			      "re:.*mlp\\.gate$", "gate_up"};
	struct kv_quant q = {.fmt = KV_QUANT_FP8};
	for (int i = 0; i < 4; i++)
		CHECK(kv_quant_ignore_add(&q, list[i]) == 0);
	/* a regular expression that does not compile is refused */
	CHECK(kv_quant_ignore_add(&q, "re:layers\\.(1") == KV_EINVAL);
	CHECK_U64(q.n_ignore, 4);
	CHECK(kv_quant_ignores(&q, "model.layers.3.self_attn.q_proj"));
	CHECK(kv_quant_ignores(&q, "lm_head"));
	CHECK(kv_quant_ignores(&q, "model.layers.0.mlp.gate"));
	CHECK(!kv_quant_ignores(&q, "model.layers.0.mlp.gate_proj"));
	CHECK(!kv_quant_ignores(&q, "model.layers.0.mlp.down_proj"));
	/* a plain name matches whole components, not part of one */
	CHECK(kv_quant_ignores(&q, "model.layers.1.mlp.gate_up"));
	CHECK(!kv_quant_ignores(&q, "model.layers.1.mlp.gate_up_proj"));
	/* an ignored matrix is counted as the checkpoint's dtype */
	CHECK_U64(bytes(&q, "model.layers.3.self_attn.q_proj", false, 128,
			256),
		  128 * 256 * 2);
	kv_quant_free(&q);
	CHECK_U64(q.n_ignore, 0);
}

/* MLX's matrices: weight n x (k bits / 32) uint32, scales n x k/group
 * and (affine) biases as many in the model's dtype, bf16 here; mxfp4 and
 * mxfp8 an e8m0 byte per 32, nvfp4 an e4m3 byte per 16 (mlx/ops.cpp,
 * commit 846d1762: affine_quantize's and fp_quantize's output shapes) */
static void mlx_formats(void)
{
	struct kv_quant q = {.fmt = KV_QUANT_MLX, .bits = 4, .group = 64,
			     .zeros = true, .tables = true};
	/* 4096 -> 4096 at 4 bits: 4096 x 512 words, 4096 x 64 scales and
	 * as many biases of 2 bytes */
	CHECK_U64(bytes(&q, "x", false, 4096, 4096),
		  4096ULL * 512 * 4 + 2 * 4096ULL * 64 * 2);
	/* 3 bits: 4096 x 384 words (k bits / 32) */
	q.bits = 3;
	CHECK_U64(bytes(&q, "x", false, 4096, 4096),
		  4096ULL * 384 * 4 + 2 * 4096ULL * 64 * 2);
	/* a matrix whose inputs the group does not divide (k 100) stays in
	 * the dtype, as mlx-lm's quantize_model leaves it */
	CHECK_U64(bytes(&q, "x", false, 100, 64), 100 * 64 * 2);
	/* mxfp4 (gpt-oss-20b's expert gate, 2880 -> 2880): 2880 x 360 words
	 * and 2880 x 90 e8m0 scales, as vLLM's mxfp4 counts it */
	struct kv_quant mx = {.fmt = KV_QUANT_MLX, .bits = 4, .group = 32,
			      .scale_bytes = 1};
	CHECK_U64(bytes(&mx, "x", true, 2880, 2880), 4147200 + 259200);
	/* nvfp4 256 -> 512: 512 x 32 words, 512 x 16 e4m3 scales, and no
	 * global scale (QuantizedLinear.from_linear passes none) */
	struct kv_quant nv = {.fmt = KV_QUANT_MLX, .bits = 4, .group = 16,
			      .scale_bytes = 1};
	CHECK_U64(bytes(&nv, "x", false, 256, 512), 512 * 128 + 512 * 16);
	/* mxfp8 256 -> 512: 512 x 64 words, 512 x 8 scales */
	struct kv_quant m8 = {.fmt = KV_QUANT_MLX, .bits = 8, .group = 32,
			      .scale_bytes = 1};
	CHECK_U64(bytes(&m8, "x", false, 256, 512), 512 * 256 + 512 * 8);
}

/* MLX's per-module entries, keyed by mlx-lm's module paths, found under
 * the names params.c gives the modules */
static void mlx_rules(void)
{
	struct kv_quant q = {.fmt = KV_QUANT_MLX, .bits = 4, .group = 64,
			     .zeros = true, .tables = true};
	struct kv_quant_rule r8 = {.bits = 8, .group = 64, .bias = true};
	struct kv_quant_rule off = {.off = true};
	const char *eight[] = {
		"language_model.model.layers.3.mlp.switch_mlp.down_proj",
		"model.layers.0.mlp.router",
		"model.language_model.embed_tokens",
		"model.layers.1.block_sparse_moe.gate",
		"model.layers.2.mlp.shared_expert.up_proj"};
	for (int i = 0; i < 5; i++)
		CHECK(kv_quant_rule_add(&q, eight[i], &r8) == 0);
	CHECK(kv_quant_rule_add(&q, "language_model.lm_head", &off) == 0);
	CHECK(kv_quant_rule_add(
		      &q, "vision_tower.encoder.layers.0.self_attn.q_proj",
		      &off) == 0);
	CHECK_U64(q.n_rules, 7);
	/* 256 -> 256 at 8 bits: 256 x 64 words, 256 x 4 scales and biases;
	 * at the block's 4: 256 x 32 words */
	uint64_t at8 = 256 * 64 * 4 + 2 * 256 * 4 * 2;
	uint64_t at4 = 256 * 32 * 4 + 2 * 256 * 4 * 2;
	const char *named[] = {"model.layers.3.mlp.experts.down_proj",
			       "model.layers.0.mlp.gate", "model.embed_tokens",
			       "model.layers.1.mlp.gate",
			       "model.layers.2.mlp.shared_experts.up_proj"};
	for (int i = 0; i < 5; i++)
		CHECK_U64(bytes(&q, named[i], false, 256, 256), at8);
	/* whole components only: layer 3's entry is not layer 30's */
	CHECK_U64(bytes(&q, "model.layers.30.mlp.experts.down_proj", false,
			256, 256),
		  at4);
	CHECK_U64(bytes(&q, "lm_head", false, 256, 256), 256 * 256 * 2);
	/* another tower's layers are not the text model's */
	CHECK_U64(bytes(&q, "model.layers.0.self_attn.q_proj", false, 256,
			256),
		  at4);
	kv_quant_free(&q);
	CHECK_U64(q.n_rules, 0);
}

/* --weights-dtype's formats */
static void typed(void)
{
	struct kv_quant q;
	CHECK(kv_quant_parse("mxfp4", &q) == 0 && q.fmt == KV_QUANT_MXFP4 &&
	      !q.experts_only);
	CHECK(kv_quant_parse("nvfp4", &q) == 0 && q.fmt == KV_QUANT_NVFP4);
	CHECK(kv_quant_parse("int4-g128", &q) == 0 &&
	      q.fmt == KV_QUANT_CT_INT && q.bits == 4 && q.group == 128 &&
	      q.packed && q.scale_bytes == 2 && !q.zeros);
	CHECK(kv_quant_parse("int8-g64", &q) == 0 && q.bits == 8);
	CHECK(kv_quant_parse("int4", &q) == KV_EINVAL); /* a plain format */
	CHECK(kv_quant_parse("int3-g128", &q) == KV_EINVAL);
	CHECK(kv_quant_parse("int4-g", &q) == KV_EINVAL);
	CHECK(kv_quant_parse("int4-g0", &q) == KV_EINVAL);
	CHECK(kv_quant_parse("int4-g12x", &q) == KV_EINVAL);
	CHECK(kv_quant_parse("int4-g-5", &q) == KV_EINVAL);
	/* int4-g128 on 4096 x 4096: 2^23 bytes of words, 4096 x 32 bf16
	 * scales, weight_shape */
	CHECK(kv_quant_parse("int4-g128", &q) == 0);
	CHECK_U64(bytes(&q, "x", false, 4096, 4096), 8388608 + 262144 + 16);
	/* Llama 3.1 8B all in mxfp4: its 6,979,321,856 linear parameters at
	 * 17/32 of a byte, the embedding and head (2 x 128256 x 4096) and
	 * norms in bf16 */
	struct kv_model *m = test_load("llama-3.1-8b");
	struct kv_params p;
	char err[KV_ERRLEN];
	if (m && kv_quant_parse("mxfp4", &q) == 0) {
		CHECK(kv_model_params_as(m, &q, &p, err) == 0);
		uint64_t lin = 8030261248ULL - 2ULL * 128256 * 4096 -
			       (32ULL * 2 + 1) * 4096;
		CHECK_U64(lin, 6979321856ULL);
		CHECK_U64(p.bytes, lin / 32 * 17 +
					   (8030261248ULL - lin) * 2);
	}
	kv_model_free(m);
}

/* A tiny Llama with a quantization_config q (JSON text), parsed: 0 or
 * the error; *m owned by the caller. */
static int with_quant(const char *q, struct kv_model **m, char *err)
{
	char json[2048];
	snprintf(json, sizeof json,
		 "{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
		 "\"hidden_size\":256,\"num_attention_heads\":4,"
		 "\"intermediate_size\":512,\"vocab_size\":1000,"
		 "\"torch_dtype\":\"bfloat16\",\"quantization_config\":%s}",
		 q);
	return kv_model_parse(json, strlen(json), "q.json", m, err);
}

/* A tiny Llama (hidden 256) with MLX's quantization block q. */
static int with_mlx(const char *q, struct kv_model **m, char *err)
{
	char json[2048];
	snprintf(json, sizeof json,
		 "{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
		 "\"hidden_size\":256,\"num_attention_heads\":4,"
		 "\"intermediate_size\":512,\"vocab_size\":1000,"
		 "\"torch_dtype\":\"bfloat16\",\"quantization\":%s,"
		 "\"quantization_config\":{\"bits\":4}}",
		 q);
	return kv_model_parse(json, strlen(json), "q.json", m, err);
}

/* MLX's block: read before the quantization_config copy (which has no
 * quant_method), its modes' defaults, its entries, and what it refuses. */
static void mlx_readers(void)
{
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	CHECK(with_mlx("{\"group_size\":64,\"bits\":4,"
		       "\"model.layers.0.mlp.gate_proj\":{\"bits\":8},"
		       "\"lm_head\":false,"
		       "\"model.layers.1.mlp.up_proj\":{\"mode\":\"mxfp8\"},"
		       "\"model.layers.1.mlp.down_proj\":true}",
		       &m, err) == 0);
	if (m) {
		struct kv_quant *q = &m->quant;
		CHECK(q->fmt == KV_QUANT_MLX && q->tables && q->bits == 4 &&
		      q->group == 64 && q->zeros && !q->scale_bytes);
		CHECK_STR(q->from, "quantization");
		CHECK_U64(q->n_rules, 4);
		/* a module's entry without a mode is affine, its group the
		 * mode's default; mxfp8 its own 8 bits in groups of 32 */
		CHECK(q->n_rules == 4 && q->rules[0].bits == 8 &&
		      q->rules[0].group == 64 && q->rules[0].bias);
		CHECK(q->n_rules == 4 && q->rules[1].off);
		CHECK(q->n_rules == 4 && q->rules[2].bits == 8 &&
		      q->rules[2].group == 32 && q->rules[2].scale_bytes == 1 &&
		      !q->rules[2].bias);
		CHECK(q->n_rules == 4 && q->rules[3].bits == 4 &&
		      !q->rules[3].off);
		kv_model_free(m);
	}
	/* mxfp4's group and bits are its own */
	CHECK(with_mlx("{\"group_size\":32,\"bits\":4,\"mode\":\"mxfp4\"}",
		       &m, err) == 0);
	if (m) {
		CHECK(m->quant.scale_bytes == 1 && !m->quant.zeros);
		kv_model_free(m);
	}
	static const struct {
		const char *q, *says;
	} bad[] = {
		{"{\"group_size\":64,\"bits\":0}",
		 "quantization.bits: must be 2, 3, 4, 5, 6 or 8 for mode "
		 "affine, got 0"},
		{"{\"group_size\":64,\"bits\":9}", "got 9"},
		{"{\"group_size\":64,\"bits\":7}", "got 7"},
		{"{\"group_size\":48,\"bits\":4}",
		 "quantization.group_size: must be 32, 64 or 128 for mode "
		 "affine, got 48"},
		{"{\"group_size\":32,\"bits\":8,\"mode\":\"mxfp4\"}",
		 "quantization.bits: must be 4 for mode mxfp4, got 8"},
		{"{\"group_size\":32,\"bits\":4,\"mode\":\"nvfp4\"}",
		 "quantization.group_size: must be 16 for mode nvfp4, got 32"},
		{"{\"group_size\":64,\"bits\":4,\"mode\":\"int4\"}",
		 "quantization.mode: unknown mode"},
		{"{\"bits\":4}", "quantization.group_size: missing"},
		{"{\"group_size\":64,\"bits\":4,\"lm_head\":8}",
		 "quantization.lm_head: must be false or an object"},
		{"{\"group_size\":64,\"bits\":4,\"lm_head\":{\"bits\":4.5}}",
		 "quantization.lm_head.bits: must be a whole number, got 4.5"},
		{"{\"group_size\":64,\"bits\":4,\"lm_head\":{\"bits\":\"8\"}}",
		 "quantization.lm_head.bits: must be a number"},
		{"[]", "quantization: must be an object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err[0] = '\0';
		CHECK(with_mlx(bad[i].q, &m, err) == KV_EINVAL);
		CHECK_HAS(err, bad[i].says);
	}
	/* a group that does not divide the hidden size: 128 of 2880
	 * (gpt-oss's width) */
	char json[] = "{\"model_type\":\"gpt_oss\",\"num_hidden_layers\":2,"
		      "\"hidden_size\":2880,\"num_attention_heads\":64,"
		      "\"head_dim\":64,\"num_local_experts\":4,"
		      "\"vocab_size\":100,\"quantization\":{"
		      "\"group_size\":128,\"bits\":4}}";
	CHECK(kv_model_parse(json, strlen(json), "g.json", &m, err) ==
	      KV_EINVAL);
	CHECK_HAS(err, "quantization.group_size: must divide the hidden size "
		       "(2880), got 128");
}

/* The config's quantization_config, method by method. */
static void readers(void)
{
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	/* compressed-tensors W4A16: int weights of 4 bits in groups of 128,
	 * packed, symmetric; scales in the checkpoint's bf16 */
	CHECK(with_quant("{\"quant_method\":\"compressed-tensors\","
			 "\"format\":\"pack-quantized\",\"config_groups\":"
			 "{\"group_0\":{\"targets\":[\"Linear\"],\"weights\":"
			 "{\"num_bits\":4,\"type\":\"int\",\"strategy\":"
			 "\"group\",\"group_size\":128,\"symmetric\":true}}},"
			 "\"ignore\":[\"lm_head\"]}",
			 &m, err) == 0);
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_CT_INT && m->quant.bits == 4 &&
		      m->quant.group == 128 && m->quant.packed &&
		      !m->quant.zeros && m->quant.scale_bytes == 2);
		CHECK(m->quant.n_ignore == 1);
		kv_model_free(m);
	}
	/* compressed-tensors FP8 dynamic: a scale per row, no input scale */
	CHECK(with_quant("{\"quant_method\":\"compressed-tensors\","
			 "\"format\":\"float-quantized\",\"config_groups\":"
			 "{\"g\":{\"weights\":{\"num_bits\":8,\"type\":"
			 "\"float\",\"strategy\":\"channel\"},"
			 "\"input_activations\":{\"dynamic\":true}}}}",
			 &m, err) == 0);
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_CT_FP8 && m->quant.group == 0 &&
		      !m->quant.input_scale);
		/* 256 -> 512: 512 x 256 bytes and 512 bf16 scales */
		CHECK_U64(bytes(&m->quant, "x", false, 256, 512),
			  512 * 256 + 512 * 2);
		kv_model_free(m);
	}
	CHECK(with_quant("{\"quant_method\":\"compressed-tensors\","
			 "\"config_groups\":{\"g\":{\"targets\":[]}}}",
			 &m, err) == KV_EINVAL);
	CHECK_HAS(err, "no group quantizes weights");
	/* bitsandbytes: nf4 with double quantization; both or neither */
	CHECK(with_quant("{\"quant_method\":\"bitsandbytes\","
			 "\"load_in_4bit\":true,"
			 "\"bnb_4bit_use_double_quant\":true}",
			 &m, err) == 0);
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_BNB4 && m->quant.double_quant);
		kv_model_free(m);
	}
	CHECK(with_quant("{\"quant_method\":\"bitsandbytes\"}", &m, err) ==
	      KV_EINVAL);
	CHECK_HAS(err, "got neither");
	/* modelopt FP8 (input scales) and NVFP4 */
	CHECK(with_quant("{\"quant_method\":\"modelopt\",\"quant_algo\":"
			 "\"FP8\"}",
			 &m, err) == 0);
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_FP8 && m->quant.input_scale);
		kv_model_free(m);
	}
	CHECK(with_quant("{\"quant_method\":\"modelopt\",\"quant_algo\":"
			 "\"NVFP4\"}",
			 &m, err) == 0);
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_NVFP4);
		/* 256 -> 512: 512 x 128 bytes, 512 x 16 fp8 scales, two
		 * float32 scalars */
		CHECK_U64(bytes(&m->quant, "x", false, 256, 512),
			  512 * 128 + 512 * 16 + 8);
		kv_model_free(m);
	}
	/* ModelOpt's quant_algo and exclude_modules in its "quantization"
	 * object, as hf_quant_config.json and some exports write them */
	CHECK(with_quant("{\"quant_method\":\"modelopt\",\"quantization\":"
			 "{\"quant_algo\":\"NVFP4\",\"exclude_modules\":"
			 "[\"lm_head\"]}}",
			 &m, err) == 0);
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_NVFP4 && m->quant.n_ignore == 1);
		kv_model_free(m);
	}
	/* fp8 static activations; a method not modelled; none named */
	CHECK(with_quant("{\"quant_method\":\"fp8\",\"activation_scheme\":"
			 "\"static\"}",
			 &m, err) == 0);
	if (m) {
		CHECK(m->quant.input_scale && !m->quant.block_n);
		kv_model_free(m);
	}
	CHECK(with_quant("{\"quant_method\":\"hqq\"}", &m, err) == 0);
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_UNKNOWN);
		CHECK_STR(m->quant.method, "hqq");
		kv_model_free(m);
	}
	CHECK(with_quant("{\"bits\":4}", &m, err) == KV_EINVAL);
	CHECK_HAS(err, "quant_method: missing");
	CHECK(with_quant("{\"quant_method\":\"awq\",\"modules_to_not_convert\""
			 ":[5]}",
			 &m, err) == KV_EINVAL);
	CHECK_HAS(err, "must be a module name");
	CHECK(with_quant("[]", &m, err) == KV_EINVAL);
	CHECK_HAS(err, "quantization_config: must be an object");
}

/* MLX checkpoints against their published model.safetensors.index.json
 * (tests/quant/README.md): metadata.total_size, every tensor's bytes, is
 * the count to the byte; the cache is the unquantized config's. */
static void mlx_checkpoints(void)
{
	static const struct {
		const char *name, *plain;
		uint64_t total;
	} ck[] = {
		{"mlx-qwen3-14b-4bit", "../tests/configs/qwen3-14b",
		 8307783680ULL},
		{"mlx-llama-3.2-1b-instruct-4bit",
		 "../tests/configs/llama-3.2-1b-instruct", 695242752ULL},
		{"mlx-llama-3.2-3b-instruct-4bit",
		 "../tests/configs/llama-3.2-3b-instruct", 1807423488ULL},
		{"mlx-llama-3.1-8b-instruct-4bit", "llama-3.1-8b",
		 4517404672ULL},
		{"mlx-llama-3.3-70b-instruct-4bit", "llama-3.1-70b",
		 39688355840ULL},
		{"mlx-qwen3-coder-30b-a3b-instruct-4bit", "qwen3-30b-a3b",
		 17180913664ULL},
		{"mlx-qwen3-coder-next-4bit",
		 "../tests/configs/qwen3-next-80b-a3b-instruct",
		 44844060160ULL},
		{"mlx-gpt-oss-20b-mxfp4-q8", "gpt-oss-20b", 12076119168ULL},
		{"mlx-glm-4.7-flash-4bit", "../tests/configs/glm-4.7-flash",
		 16852202496ULL},
	};
	for (size_t i = 0; i < sizeof ck / sizeof *ck; i++) {
		char path[128], err[KV_ERRLEN];
		struct kv_params p, u;
		snprintf(path, sizeof path, "../tests/quant/%s", ck[i].name);
		struct kv_model *m = test_load(path);
		struct kv_model *plain = test_load(ck[i].plain);
		if (!m || !plain) {
			kv_model_free(m);
			kv_model_free(plain);
			continue;
		}
		CHECK(kv_model_params(m, &p, err) == 0);
		CHECK(kv_model_params(plain, &u, err) == 0);
		CHECK_U64(p.bytes, ck[i].total);
		CHECK_U64(p.total, u.total);
		struct kv_opts o = kv_opts_default(m);
		struct kv_opts uo = kv_opts_default(plain);
		uint64_t kv = 0, ukv = 1;
		CHECK(kv_model_bytes(m, &o, 32768, 1, &kv, err) == 0);
		CHECK(kv_model_bytes(plain, &uo, 32768, 1, &ukv, err) == 0);
		CHECK_U64(kv, ukv);
		kv_model_free(m);
		kv_model_free(plain);
	}
}

/* A mixed recipe (mlx-lm's mixed_3_6 on a 2-layer Llama of hidden 256,
 * MLP 512): every module its own entry, layer 0's v_proj and down_proj
 * and lm_head at 6 bits, the rest at 3, the block's 4 used by none.
 * Worked by hand: a matrix k -> n at b bits is n k b / 8 bytes and
 * 2 n k / 64 bf16 scales and biases (n k / 16 bytes). */
static void mlx_mixed(void)
{
	char json[4096], err[KV_ERRLEN];
	int len = snprintf(json, sizeof json,
			   "{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
			   "\"hidden_size\":256,\"num_attention_heads\":4,"
			   "\"intermediate_size\":512,\"vocab_size\":1000,"
			   "\"tie_word_embeddings\":false,"
			   "\"torch_dtype\":\"bfloat16\",\"quantization\":{"
			   "\"group_size\":64,\"bits\":4");
	static const char *const mods[] = {
		"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
		"self_attn.o_proj", "mlp.gate_proj",    "mlp.up_proj",
		"mlp.down_proj"};
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < 7; i++) {
			bool six = l == 0 && (i == 2 || i == 6);
			len += snprintf(json + len, sizeof json - len,
					",\"model.layers.%d.%s\":{"
					"\"group_size\":64,\"bits\":%d,"
					"\"mode\":\"affine\"}",
					l, mods[i], six ? 6 : 3);
		}
	snprintf(json + len, sizeof json - len,
		 ",\"model.embed_tokens\":{\"group_size\":64,\"bits\":3},"
		 "\"lm_head\":{\"group_size\":64,\"bits\":6}}}");
	struct kv_model *m = NULL;
	struct kv_params p;
	CHECK(kv_model_parse(json, strlen(json), "mixed.json", &m, err) == 0);
	if (!m)
		return;
	CHECK(kv_model_params(m, &p, err) == 0);
	/* per layer: q, k, v, o 256 x 256 (4 heads of 64, MHA) and the MLP
	 * 3 x 256 x 512: 655,360 values; layer 0's v (65,536) and down
	 * (131,072) at 6 bits */
	uint64_t lin = 4 * 65536 + 3 * 131072, six = 65536 + 131072;
	uint64_t want = (2 * lin - six) * 3 / 8 + six * 6 / 8 + 2 * lin / 16;
	want += 1000 * 256 * 3 / 8 + 1000 * 256 / 16; /* embed_tokens */
	want += 1000 * 256 * 6 / 8 + 1000 * 256 / 16; /* lm_head */
	want += (2 * 2 + 1) * 256 * 2;                /* norms, bf16 */
	CHECK_U64(p.bytes, want);
	kv_model_free(m);
}

/* ModelOpt's hf_quant_config.json beside a config.json without a
 * quantization_config (tests/quant/modelopt-*: Llama 3.1 8B's config),
 * read as vLLM reads it; a quantization_config in config.json wins. */
static void modelopt_beside(void)
{
	struct kv_model *m = test_load("../tests/quant/modelopt-fp8/config");
	struct kv_params p;
	char err[KV_ERRLEN];
	/* FP8 per tensor, input scales: the 6,979,321,856 linear values a
	 * byte each and two float32 scalars for each of the 224 matrices;
	 * the embedding, the excluded lm_head (2 x 128256 x 4096) and the
	 * 266,240 norm weights in bf16 */
	uint64_t fp8 = 6979321856ULL + 224 * 8 + 2 * 525336576ULL * 2 +
		       266240 * 2;
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_FP8 && m->quant.kv_fp8);
		CHECK_STR(m->quant.from, "hf_quant_config");
		CHECK(m->quant.n_ignore == 1 &&
		      kv_quant_ignores(&m->quant, "lm_head"));
		CHECK(kv_model_params(m, &p, err) == 0);
		CHECK_U64(p.bytes, fp8);
		CHECK(kv_opts_default(m).k_dtype == KV_DTYPE_FP8);
		kv_model_free(m);
	}
	/* NVFP4, kv_cache_quant_algo null: the cache stays bf16; 9/16 of a
	 * byte a value and two float32 scalars a matrix */
	if ((m = test_load("../tests/quant/modelopt-nvfp4/config"))) {
		CHECK(m->quant.fmt == KV_QUANT_NVFP4 && !m->quant.kv_fp8);
		CHECK(kv_model_params(m, &p, err) == 0);
		CHECK_U64(p.bytes, 6979321856ULL / 16 * 9 + 224 * 8 +
					   2 * 525336576ULL * 2 + 266240 * 2);
		kv_model_free(m);
	}
	/* config.json's own quantization_config (fp8, dynamic: one scale a
	 * matrix) wins over the file beside, and its FP8 cache is not read */
	if ((m = test_load("../tests/quant/modelopt-stale/config"))) {
		CHECK(m->quant.fmt == KV_QUANT_FP8 && !m->quant.kv_fp8);
		CHECK_STR(m->quant.from, "quantization_config");
		CHECK(kv_model_params(m, &p, err) == 0);
		CHECK_U64(p.bytes, fp8 - 224 * 4);
		kv_model_free(m);
	}
	/* a config read from memory has no folder: nothing beside it */
	const char *json = "{\"model_type\":\"llama\",\"num_hidden_layers\":1,"
			   "\"hidden_size\":64,\"num_attention_heads\":1}";
	CHECK(kv_model_parse(json, strlen(json),
			     "tests/quant/modelopt-fp8/config.json", &m,
			     err) == 0);
	if (m) {
		CHECK(m->quant.fmt == KV_QUANT_NONE);
		kv_model_free(m);
	}
}

static void checkpoints(void)
{
	struct kv_model *m;
	struct kv_params p;
	char err[KV_ERRLEN];
	/* gpt-oss-20b: mxfp4 experts, the rest bf16; its published
	 * model.safetensors.index.json says total_size 13761264768 */
	if ((m = test_load("gpt-oss-20b"))) {
		CHECK(kv_model_params(m, &p, err) == 0);
		CHECK_U64(p.bytes, 13761264768ULL);
		CHECK_U64(p.total, 20914757184ULL);
		kv_model_free(m);
	}
	/* an unquantized checkpoint: parameters x its dtype */
	if ((m = test_load("llama-3.1-8b"))) {
		CHECK(kv_model_params(m, &p, err) == 0);
		CHECK_U64(p.bytes, 2 * 8030261248ULL);
		kv_model_free(m);
	}
	/* DeepSeek-V3 (fp8, 128 x 128 blocks): below half its bf16 bytes,
	 * above its fp8 parameters */
	if ((m = test_load("deepseek-v3"))) {
		CHECK(kv_model_params(m, &p, err) == 0);
		CHECK_STR(m->quant.method, "fp8");
		CHECK(m->quant.block_n == 128 && m->quant.block_k == 128);
		CHECK(p.bytes > p.total && p.bytes < p.total + p.total / 50);
		kv_model_free(m);
	}
}

int main(void)
{
	formats();
	mlx_formats();
	ignores();
	mlx_rules();
	typed();
	readers();
	mlx_readers();
	checkpoints();
	mlx_checkpoints();
	mlx_mixed();
	modelopt_beside();
	return test_done("test_quant");
}
