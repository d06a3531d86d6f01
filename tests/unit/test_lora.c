/*
 * test_lora.c - LoRA slots against hand-worked counts from the engines'
 * code: an adapter of rank r keeps A (r x in) and B (out x r) for every
 * matrix it adapts, max_loras of them, split over tensor-parallel ranks
 * as the matrix is (vLLM's base_linear.py create_lora_weights, SGLang's
 * mem_pool.py get_lora_A_shape / get_lora_B_shape); a token costs
 * 2 r (in + out) FLOPs a matrix. And what the slots do to a row: taken
 * before the KV budget, read by each step.
 */
#include "kv/fit.h"
#include "kv/lora.h"
#include "test.h"

#define VLLM kv_server_get(KV_SERVER_VLLM)
#define SGLANG kv_server_get(KV_SERVER_SGLANG)
#define IDEAL kv_server_get(KV_SERVER_IDEAL)
#define TRTLLM kv_server_get(KV_SERVER_TRTLLM)
#define LLAMACPP kv_server_get(KV_SERVER_LLAMACPP)
#define GB 1000000000ULL

static struct kv_fit_in row(const struct kv_model *m,
			    const struct kv_server *sv,
			    const struct kv_lora *l, uint32_t tp)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_BF16,
				  .w_dtype = KV_DTYPE_BF16, .mem = 80 * GB,
				  .runtime = true, .tp = tp, .pp = 1,
				  .ctx = 8192, .server = sv, .lora = l};
}

static struct kv_lora_stage stage(const struct kv_fit_in *in)
{
	struct kv_lora_stage s;
	CHECK(kv_lora_stage(in, 0, in->m->n_layers, true, true, &s) == 0);
	return s;
}

static void parse(void)
{
	unsigned m;
	char bad[32], names[160];
	CHECK(kv_lora_modules_parse("q_proj,v_proj,down_proj", &m, bad,
				    sizeof bad) == 0);
	CHECK_U64(m, KV_LORA_QKV | KV_LORA_DOWN);
	CHECK_STR(kv_lora_modules_name(m, names, sizeof names),
		  "qkv_proj,down_proj");
	CHECK(kv_lora_modules_parse("all", &m, bad, sizeof bad) == 0);
	CHECK_U64(m, 0);
	CHECK(kv_lora_modules_parse("gate_proj,qproj", &m, bad,
				    sizeof bad) == KV_EINVAL);
	CHECK_STR(bad, "qproj");
	CHECK(kv_lora_modules_parse("o_proj,", &m, bad, sizeof bad) == 0);
	CHECK(kv_lora_modules_parse(",", &m, bad, sizeof bad) == KV_EINVAL);
}

/*
 * Llama 3.1 8B (hidden 4096, 32 heads and 8 K/V heads of 128, MLP 14336,
 * vocabulary 128,256, 32 layers), rank 64, bf16. A layer's widths
 * (in + out of each matrix's A and B): q, k, v 3 x 4096 + 32 x 128 +
 * 8 x 256 = 18,432; o 4096 + 4096 = 8,192; gate and up 2 (4096 + 14336)
 * = 36,864; down 14336 + 4096 = 18,432; 81,920 a layer, 2,621,440 in
 * all. vLLM adapts LlamaForCausalLM's embed_tokens and lm_head too:
 * 128256 + 4096 = 132,352 each. 2,886,144 x 64 x 2 B = 369,426,432 B an
 * adapter; four: 1,477,705,728.
 */
static void llama(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	struct kv_lora l = {.max_loras = 4, .rank = 64};
	if (!m)
		return;
	struct kv_fit_in in = row(m, VLLM, &l, 1);
	struct kv_lora_stage s = stage(&in);
	CHECK_U64(s.adapter, 369426432);
	CHECK_U64(s.slots, 1477705728);
	CHECK_U64(s.lookup, 128256ULL * 64 * 2); /* the embedding's A */
	/* a token: every layer's widths, the embedding's B (4096); a
	 * sampled row the head's 132,352 */
	CHECK_NEAR(s.flops, 2.0 * 64 * (2621440 + 4096), 0);
	CHECK_NEAR(s.head_flops, 2.0 * 64 * 132352, 0);
	CHECK_U64(kv_lora_host_bytes(&in), 1477705728); /* 4 cached */
	l.cpu_loras = 10;
	CHECK_U64(kv_lora_host_bytes(&in), 3694264320ULL);
	l.cpu_loras = 0;

	/* tp 2: q, k, v 12288 + 16 x 128 + 4 x 256 = 15,360; o 2048 + 4096
	 * = 6,144; gate and up 2 (4096 + 7168) = 22,528; down 7168 + 4096
	 * = 11,264; 55,296 a layer, 1,769,472; vLLM's embedding and head
	 * whole: 2,034,176 x 128 B = 260,374,528 */
	in = row(m, VLLM, &l, 2);
	CHECK_U64(stage(&in).adapter, 260374528);
	/* SGLang splits the head's B: 128,256 (a multiple of 64) / 2 =
	 * 64,128 rows, 68,224 with its A: 1,970,048 x 128 B */
	l.rank = 64;
	in = row(m, SGLANG, &l, 2);
	CHECK_U64(stage(&in).adapter, 252166144);
	/* its default: 8 adapters */
	l.max_loras = 0;
	CHECK_U64(stage(&in).slots, 8 * 252166144ULL);
	CHECK_U64(kv_lora_max_loras(&in), 8);
	/* the ideal engine: the layers' matrices alone, 2,621,440 x 128 B */
	l.max_loras = 1;
	in = row(m, IDEAL, &l, 1);
	CHECK_U64(stage(&in).adapter, 2621440ULL * 128);
	/* q and v asked: the packed q, k, v whole (vLLM's
	 * is_in_target_modules) */
	l.modules = KV_LORA_QKV;
	in = row(m, VLLM, &l, 1);
	CHECK_U64(stage(&in).adapter, 32 * 18432ULL * 128);
	l.modules = 0;

	/* vLLM's default rank is 16 */
	l.rank = 0;
	in = row(m, VLLM, &l, 1);
	CHECK_U64(kv_lora_rank(&in), 16);
	CHECK_U64(stage(&in).adapter, 2886144ULL * 16 * 2);
	kv_model_free(m);
}

/*
 * What the slots do to a row: vLLM takes them before its KV budget, so
 * its free KV is less by them, byte for byte; a step of 24 users reads
 * the 4 adapters' slots (each user its own, at most max_loras), and
 * computes 24 tokens' products: (2,621,440 + 4,096) x 128 + 132,352 x
 * 128 FLOPs each.
 */
static void row_effects(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	struct kv_lora l = {.max_loras = 4, .rank = 64};
	char err[KV_ERRLEN];
	struct kv_fit f0, f;
	if (!m)
		return;
	struct kv_fit_in in = row(m, VLLM, NULL, 1);
	in.mem = 48305799168ULL; /* an L40S */
	in.gpu = "l40s";
	CHECK(kv_fit_solve(&in, &f0, err) == 0);
	in.lora = &l;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f0.free_kv - f.free_kv, 1477705728);
	CHECK_U64(f.lora_bytes, 1477705728);
	CHECK_U64(f0.users_whole, 25);
	CHECK_U64(f.users_whole, 24);
	in.users = 24;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	in.lora = NULL;
	CHECK(kv_fit_solve(&in, &f0, err) == 0);
	CHECK_U64(f.step_lora_bytes, 1477705728);
	CHECK_U64(f.step_weight_bytes - f0.step_weight_bytes, 1477705728);
	CHECK_U64(f.step_lookup_bytes - f0.step_lookup_bytes,
		  4 * 128256ULL * 128);
	CHECK_NEAR(f.step_lora_flops, 24 * 128.0 * (2625536 + 132352), 0);
	CHECK_NEAR(f.step_flops - f0.step_flops, f.step_lora_flops, 1);
	/* one user reads its one adapter */
	in.lora = &l;
	in.users = 1;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.step_lora_bytes, 369426432);
	kv_model_free(m);
}

/*
 * MoE: Qwen1.5-MoE-A2.7B (hidden 2048, 16 heads and 16 K/V heads of 128,
 * 60 experts of 1408, 4 a token, shared experts of 5632 in all,
 * vocabulary 151,936, 24 layers), rank 16. A layer under vLLM: q, k, v
 * 6144 + 2048 + 4096 = 12,288; o 4,096; the shared MLP 2 (2048 + 5632) +
 * 5632 + 2048 = 23,040; the experts 60 x (2 (2048 + 1408) + 1408 +
 * 2048) = 60 x 10,368 = 622,080; the router 2048 + 60 = 2,108 and the
 * shared expert's gate 2048 + 1 = 2,049: 665,661 a layer, 15,975,864 in
 * all (Qwen2MoeForCausalLM adapts no embedding): x 32 B = 511,227,648.
 * A token reads 4 experts: 12288 + 4096 + 23040 + 41472 + 4157 = 85,053
 * a layer. SGLang: no router, every expert's slots beside the shared
 * MLP's, and the embedding and head: 661,504 x 24 + 2 x 153,984 =
 * 16,184,064 x 32 B.
 */
static void moe(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = NULL;
	struct kv_lora l = {.max_loras = 1, .rank = 16};
	if (kv_model_load("tests/configs/qwen1.5-moe-a2.7b.json", &m, err)) {
		fprintf(stderr, "%s\n", err);
		CHECK(0);
		return;
	}
	struct kv_fit_in in = row(m, VLLM, &l, 1);
	struct kv_lora_stage s = stage(&in);
	CHECK_U64(s.adapter, 511227648);
	CHECK_NEAR(s.flops, 2.0 * 16 * 85053 * 24, 0);
	CHECK_NEAR(s.head_flops, 0, 0);
	in = row(m, SGLANG, &l, 1);
	CHECK_U64(stage(&in).adapter, 16184064ULL * 32);
	kv_model_free(m);
}

static void refusals(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	struct kv_lora l = {.max_loras = 2, .rank = 24};
	char err[KV_ERRLEN];
	if (!m)
		return;
	struct kv_fit_in in = row(m, VLLM, &l, 1);
	/* vLLM's MaxLoRARanks */
	CHECK(kv_lora_refuses(&in, err));
	CHECK_STR(err, "vllm: --max-lora-rank 24: vLLM takes 1, 8, 16, 32, "
		       "64, 128, 256, 320, 512");
	struct kv_fit f;
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	/* SGLang takes any rank, but has no default */
	in.server = SGLANG;
	CHECK(!kv_lora_refuses(&in, err));
	l.rank = 0;
	CHECK(kv_lora_refuses(&in, err));
	CHECK_STR(err, "sglang: --max-loras: SGLang takes the largest rank "
		       "from the adapters it loads; give --max-lora-rank");
	l.rank = 16;
	l.modules = KV_LORA_ROUTER;
	CHECK(kv_lora_refuses(&in, err));
	CHECK_STR(err, "sglang: --lora-target-modules gate: SGLang has no "
		       "such module (it adapts qkv_proj,o_proj,gate_up_proj,"
		       "down_proj,embed_tokens,lm_head)");
	l.modules = 0;
	/* vLLM refuses fewer cached than a batch holds */
	in.server = VLLM;
	l.cpu_loras = 1;
	CHECK(kv_lora_refuses(&in, err));
	CHECK_STR(err, "vllm: --max-cpu-loras 1: must be at least "
		       "--max-loras 2");
	l.cpu_loras = 0;
	in.server = TRTLLM;
	CHECK(kv_lora_refuses(&in, err));
	in.server = LLAMACPP;
	CHECK(kv_lora_refuses(&in, err));
	in.lora = NULL;
	CHECK(!kv_lora_refuses(&in, err));
	kv_model_free(m);

	/* layers not modelled: MLA */
	m = test_load("deepseek-v2-lite");
	if (!m)
		return;
	in = row(m, VLLM, &l, 1);
	CHECK(kv_lora_refuses(&in, err));
	CHECK_STR(err, "deepseek-v2-lite: LoRA slots of its multi-head "
		       "latent attention layers are not modelled "
		       "(Llama-style q, k, v, o, "
		       "gate, up and down projections, MoE experts, "
		       "embedding and head)");
	kv_model_free(m);
}

int main(void)
{
	parse();
	llama();
	row_effects();
	moe();
	refusals();
	return test_done("lora");
}
