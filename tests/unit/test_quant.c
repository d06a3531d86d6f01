/*
 * test_quant.c - weights as quantized checkpoints store them: one matrix
 * per format, worked by hand from the tensors vLLM's loaders create for it
 * (vllm/model_executor/layers/quantization: fp8.py Fp8LinearMethod,
 * mxfp4.py GptOssMxfp4MoEMethod, auto_awq.py, auto_gptq.py,
 * compressed_tensors_wNa16.py, bitsandbytes.py), the ignore lists'
 * matching, and whole checkpoints against their published index.
 */
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
	ignores();
	typed();
	readers();
	checkpoints();
	return test_done("test_quant");
}
