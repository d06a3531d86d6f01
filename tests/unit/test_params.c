/*
 * test_params.c - parameter counts of the shipped configs against the
 * sizes their publishers state, weight bytes per format, and the counts
 * memoized once per model (kv_params_memo) against those derived anew.
 */
#include <dirent.h>

#include "kv/params.h"
#include "test.h"

static struct kv_params count(const char *name)
{
	char err[KV_ERRLEN];
	struct kv_params p = {0};
	struct kv_model *m = test_load(name);
	if (!m)
		return p;
	CHECK(kv_model_params(m, &p, err) == 0);
	kv_model_free(m);
	return p;
}

/* The memo's counts against the functions that derive them, for m with
 * its matrices as q says (NULL: its own). */
static void memo_agrees(const struct kv_model *m, const struct kv_quant *q)
{
	char err[KV_ERRLEN];
	struct kv_params_memo c;
	struct kv_params p;
	uint64_t f, l, fb, lb, np, nb;
	const struct kv_quant *own = q ? q : &m->quant;
	if (kv_params_memo_init(&c, m, q)) {
		/* only where a direct count fails too */
		CHECK(kv_model_params_as(m, own, &p, err) ||
		      kv_model_params(m, &p, err));
		return;
	}
	CHECK(kv_params_memo_of(&c, m, q));
	CHECK(kv_params_memo_of(&c, m, own));
	if (q)
		CHECK(!kv_params_memo_of(&c, m, NULL));
	CHECK(kv_model_params(m, &p, err) == 0);
	CHECK(!memcmp(&c.model, &p, sizeof p));
	CHECK(kv_model_edge_bytes(m, q, &f, &l, &fb, &lb) == 0);
	CHECK_U64(c.first, f);
	CHECK_U64(c.last, l);
	CHECK_U64(c.first_bytes, fb);
	CHECK_U64(c.last_bytes, lb);
	CHECK(kv_model_lookup_bytes(m, q, &np, &nb) == 0);
	CHECK_U64(c.lookup, np);
	CHECK_U64(c.lookup_bytes, nb);
	int bad = 0;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		struct kv_params lp;
		CHECK(kv_layer_params_as(m, own, i, &lp) == 0);
		bad += memcmp(&c.layers[i], &lp, sizeof lp) != 0;
	}
	if (bad)
		fprintf(stderr, "%s: %d layers counted otherwise\n", m->name,
			bad);
	CHECK(bad == 0);
	kv_params_memo_free(&c);
	CHECK(c.m == NULL && c.layers == NULL);
	kv_params_memo_free(&c); /* emptied: a no-op */
	kv_params_memo_free(NULL);
}

/* Every config of dir (from the source top) counted through the memo as
 * directly: in its own format, as MXFP4 and int4 matrices, and int4 with
 * an ignore list that names modules of one layer, of every layer and by
 * a regular expression (each matrix's name decides). */
static void memo_dir(const char *dir)
{
	struct kv_quant mx, i4, ig;
	CHECK(kv_quant_parse("mxfp4", &mx) == 0);
	CHECK(kv_quant_parse("int4-g128", &i4) == 0);
	CHECK(kv_quant_parse("int4-g32", &ig) == 0);
	CHECK(kv_quant_ignore_add(&ig, "model.layers.1.mlp") == 0);
	CHECK(kv_quant_ignore_add(&ig, "*.self_attn.o_proj") == 0);
	CHECK(kv_quant_ignore_add(&ig, "re:layers\\.[0-9]*[05]\\.") == 0);
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char path[512], err[KV_ERRLEN];
		struct kv_model *m = NULL;
		if (len < 6 || strcmp(e->d_name + len - 5, ".json") ||
		    !strcmp(e->d_name, "gpus.json") ||
		    !strcmp(e->d_name, "efficiency.json"))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (kv_model_load(path, &m, err)) {
			fprintf(stderr, "load: %s\n", err);
			test_failures++;
			continue;
		}
		memo_agrees(m, NULL);
		memo_agrees(m, &mx);
		memo_agrees(m, &i4);
		memo_agrees(m, &ig);
		kv_model_free(m);
		n++;
	}
	if (d)
		closedir(d);
	CHECK(n > 10);
	/* the names count: Llama 3.1 8B's layer 1 keeps its MLP in bf16,
	 * layer 5 everything but its norms, layer 2 only its o_proj */
	struct kv_model *m = !strcmp(dir, "configs") ? test_load("llama-3.1-8b")
						      : NULL;
	struct kv_params_memo c;
	if (m && !kv_params_memo_init(&c, m, &ig)) {
		CHECK(c.layers[1].bytes > c.layers[2].bytes);
		CHECK(c.layers[5].bytes > c.layers[1].bytes);
		CHECK_U64(c.layers[3].bytes, c.layers[2].bytes);
		kv_params_memo_free(&c);
	}
	kv_model_free(m);
	kv_quant_free(&mx);
	kv_quant_free(&i4);
	kv_quant_free(&ig);
}

int main(void)
{
	memo_dir("configs");
	memo_dir("tests/configs");

	struct kv_params p;

	/* exact counts, worked by hand in the man page */
	p = count("llama-3.1-8b");
	CHECK_U64(p.total, 8030261248ULL);
	CHECK_U64(p.active, 8030261248ULL);
	CHECK_U64(p.embed, 525336576ULL);  /* 128256 x 4096 */
	CHECK_U64(p.head, 525336576ULL);   /* untied */
	CHECK_U64(count("llama-3.1-70b").total, 70553706496ULL);
	CHECK_U64(count("llama-2-7b").total, 6738415616ULL);
	CHECK_U64(count("mistral-7b-v0.1").total, 7241732096ULL);
	CHECK_U64(count("qwen2.5-7b").total, 7615616512ULL); /* qkv bias */
	CHECK_U64(count("qwen3-8b").total, 8190735360ULL);   /* q/k norm */
	CHECK_U64(count("phi-3-mini-4k").total, 3821079552ULL);
	CHECK_U64(count("gemma-2-9b").total, 9241705984ULL); /* 4 norms, tied */
	CHECK_U64(count("falcon-7b").total, 6921720704ULL);  /* MQA, LN */

	/* Mamba mixers, worked by hand: Mamba-2.8B (64 layers of in_proj
	 * 2560 x 10240, conv 5120 x 5, x_proj 5120 x (160 + 32), dt_proj
	 * 160 x 5120 + 5120, A and D 5120 x 17, out_proj 5120 x 2560, a norm;
	 * 50280 x 2560 tied; "2.8B"), and Nemotron Nano 9B v2 (27 Mamba-2
	 * layers, 25 relu^2 MLPs, 4 attention layers; "8.89B") */
	CHECK_U64(count("../tests/configs/mamba-2.8b").total,
		  64ULL * 41244160 + 50280ULL * 2560 + 2560);
	p = count("../tests/configs/nemotron-nano-9b-v2");
	CHECK_U64(p.total, 8888227328ULL);
	/* a gated DeltaNet layer of Qwen3.5 9B (hidden 4096; 16 key heads,
	 * 32 value heads of 128): in_proj_qkvz and _ba 4096 x (4096 + 8192 +
	 * 64), conv 8192 x 4, dt_bias and A_log 64, norm 128, out_proj 4096 x
	 * 4096, and its two norms of 4096 */
	struct kv_model *q = test_load("../tests/configs/qwen3.5-9b");
	if (q) {
		struct kv_params lp;
		CHECK(kv_layer_params(q, 0, &lp) == 0);
		uint64_t mlp = 3ULL * 4096 * 12288;
		CHECK_U64(lp.total - mlp, 4096ULL * 12352 + 8192 * 4 + 64 + 128 +
					   4096ULL * 4096 + 2 * 4096);
		kv_model_free(q);
	}

	/* GPT-2: tied head, learned positions, LayerNorm, biases */
	p = count("gpt2");
	CHECK_U64(p.total, 124439808ULL);
	CHECK_U64(p.head, 0);
	CHECK_U64(p.embed, 50257ULL * 768 + 1024ULL * 768);

	/* MoE: total and active per token */
	p = count("mixtral-8x7b");
	CHECK_U64(p.total, 46702792704ULL);
	CHECK_U64(p.active, 12879925248ULL);   /* "12.9B active" */
	CHECK_U64(p.experts, 8);
	CHECK_U64(p.experts_active, 2);
	p = count("qwen3-30b-a3b");
	CHECK_U64(p.total, 30532122624ULL);    /* "30.5B, 3.3B active" */
	CHECK_U64(p.active, 3353032704ULL);
	p = count("gpt-oss-20b");
	CHECK_U64(p.total, 20914757184ULL);    /* "20.9B" */
	/* OpenAI's 3.61B active leaves out the input embedding */
	CHECK_U64(p.active - 201088ULL * 2880, 3608307264ULL);

	/* MLA + MoE: the 671B of DeepSeek-V3 leaves out its MTP layer */
	p = count("deepseek-v3");
	CHECK_U64(p.total, 671026419200ULL);
	CHECK(p.mtp > 11000000000ULL && p.mtp < 12000000000ULL);
	CHECK_NEAR((double)p.active / 1e9, 37.55, 0.01); /* "37B active" */
	p = count("deepseek-v2-lite");         /* q_lora_rank null */
	CHECK_U64(p.total, 15706484224ULL);    /* "15.7B" */

	/* Jamba: Mamba mixers, MoE every other layer: "52B, 12B active" */
	p = count("jamba-v0.1");
	CHECK_NEAR((double)p.total / 1e9, 51.57, 0.01);
	CHECK_NEAR((double)p.active / 1e9, 12.11, 0.01);

	CHECK_U64(count("openelm-270m").total, 271527168ULL);

	/* MLPs of two matrices and LayerNorms. GPT-J 6B (published as
	 * 6,053,381,344): per layer q, k, v, o 4096^2 unbiased, fc_in and
	 * fc_out 4096 x 16384 with their biases, one LayerNorm; untied 50400
	 * x 4096 twice, the head's bias, a final LayerNorm */
	CHECK_U64(count("../tests/configs/gpt-j-6b").total,
		  28ULL * (4ULL * 4096 * 4096 + 2ULL * 4096 * 16384 + 16384 +
			   4096 + 2 * 4096) +
			  2ULL * 50400 * 4096 + 50400 + 2 * 4096);
	/* RedPajama-INCITE 3B (GPT-NeoX, "2.8B"): qkv 2560 x 7680 and
	 * dense 2560^2, biased; the MLP 2 x 2560 x 10240 and its biases; two
	 * LayerNorms a layer; untied 50432 x 2560 twice, a final LayerNorm */
	CHECK_U64(count("../tests/configs/redpajama-incite-3b").total,
		  32ULL * (2560ULL * 7680 + 7680 + 2560ULL * 2560 + 2560 +
			   2ULL * 2560 * 10240 + 10240 + 2560 + 4 * 2560) +
			  2ULL * 50432 * 2560 + 2 * 2560);

	/* DBRX, experts in ffn_config ("132B, 36B active"): per layer q
	 * and o 6144^2 each, k and v 6144 x 1024, two norms, a router of 16,
	 * 16 experts of 3 x 6144 x 10752; untied 100352 x 6144 twice and a
	 * final norm; 4 experts a token */
	p = count("../tests/configs/dbrx-instruct");
	{
		uint64_t layer = 88080384 + 12288 + 98304, expert = 198180864;
		uint64_t edges = 2ULL * 100352 * 6144 + 6144;
		CHECK_U64(p.total, 40 * (layer + 16 * expert) + edges);
		CHECK_U64(p.active, 40 * (layer + 4 * expert) + edges);
	}

	/* Kimi Linear's first layer, KDA and a dense MLP: q, k, v 2304 x
	 * 4096 with convolutions of 4, f and g's low ranks 2304 x 128 and
	 * 128 x 4096, dt bias 4096, b_proj 2304 x 32 and A 32, a norm of
	 * 128, o_proj 4096 x 2304; two norms; MLP 3 x 2304 x 9216 */
	struct kv_model *k = test_load("../tests/configs/kimi-linear-48b-a3b");
	if (k) {
		struct kv_params lp;
		CHECK(kv_layer_params(k, 0, &lp) == 0);
		CHECK_U64(lp.total, 3ULL * 2304 * 4096 + 3 * 4096 * 4 +
					    2 * (2304 * 128 + 128 * 4096) +
					    4096 + 2304 * 32 + 32 + 128 +
					    4096ULL * 2304 + 2 * 2304 +
					    3ULL * 2304 * 9216);
		kv_model_free(k);
	}

	/* RecurrentGemma 2B ("2.7B", tied): a recurrent layer's biased x and
	 * y projections 2560 x 2560, convolution 2560 x (4 + 1), gates 2 x
	 * 2560 x (256 + 1), recurrence 2560, out 2560 x 2560 biased; two
	 * norms; the MLP biased and half as wide as intermediate_size,
	 * 3 x 2560 x 7680 */
	struct kv_model *rg = test_load("../tests/configs/recurrentgemma-2b");
	if (rg) {
		struct kv_params lp;
		CHECK(kv_layer_params(rg, 0, &lp) == 0);
		CHECK_U64(lp.total, 2561ULL * 5120 + 2560 * 5 + 5120 * 257 +
					    2560 + 2561ULL * 2560 + 2 * 2560 +
					    3ULL * 2560 * 7680 + 2 * 7680 +
					    2560);
		kv_model_free(rg);
	}
	CHECK_NEAR((double)count("../tests/configs/recurrentgemma-2b").total /
			   1e9,
		   2.683, 0.001);

	/* Zamba2 2.7B ("2.7B", tied): 54 Mamba-2 mixers (in_proj 2560 x
	 * 10448, conv 5248 x 5, dt, A and D of 80 heads, a norm of 5120,
	 * out_proj 5120 x 2560) with a norm each; 2 shared blocks (q, k, v
	 * over 5120 inputs, 3 x 5120 outputs; o 5120 x 2560; MLP 3 x 2560 x
	 * 10240; norms 3 x 2560) taken in turn by 9 attention layers, each
	 * with a linear 2560 x 2560 and an MLP adapter (2560 + 20480) x 128 */
	CHECK_U64(count("../tests/configs/zamba2-2.7b").total,
		  54ULL * (2560ULL * 10448 + 5248 * 5 + 240 + 5120 +
			   5120ULL * 2560 + 2560) +
			  2ULL * (5120ULL * 15360 + 5120ULL * 2560 +
				  3ULL * 2560 * 10240 + 3 * 2560) +
			  9ULL * (2560ULL * 2560 + 23040ULL * 128) +
			  32000ULL * 2560 + 2560);

	/* Llama 3.2 90B Vision's text model (88.6B with its vision
	 * encoder): 100 layers of q and o 8192^2, k and v 8192 x 1024, an MLP
	 * of 3 x 8192 x 28672 and two norms; its 20 cross-attention layers
	 * also norm q and k (128 each) and gate attention and MLP; 8
	 * embedding rows past the vocabulary, an untied head */
	CHECK_U64(count("../tests/configs/llama-3.2-90b-vision-instruct").total,
		  100ULL * (2ULL * 8192 * 8192 + 2ULL * 8192 * 1024 +
			    3ULL * 8192 * 28672 + 2 * 8192) +
			  20ULL * (2 * 128 + 2) + (128256ULL + 8) * 8192 +
			  128256ULL * 8192 + 8192);

	/* LFM2.5-VL 1.6B's text model (LFM2 1.2B's shape, "1.2B", tied):
	 * 6 attention layers (q and o 2048^2, k and v 2048 x 512, q and k
	 * norms of 64), 10 short convolutions (in_proj 2048 x 6144, conv
	 * 2048 x 3, out_proj 2048^2), all with an MLP of 3 x 2048 x 8192
	 * (2/3 of block_ff_dim 12288) and two norms */
	CHECK_U64(count("../tests/configs/lfm2.5-vl-1.6b").total,
		  6ULL * (2ULL * 2048 * 2048 + 2ULL * 2048 * 512 + 128) +
			  10ULL * (2048ULL * 6144 + 2048 * 3 +
				   2048ULL * 2048) +
			  16ULL * (3ULL * 2048 * 8192 + 2 * 2048) +
			  65536ULL * 2048 + 2048);

	/* MiniCPM3 4B (tied, its class's default): per layer q_a 2560 x 768
	 * and its norm, q_b 768 x 40 x 96, kv_a 2560 x (256 + 32) and its
	 * norm, kv_b 256 x 40 x (64 + 64), o 40 x 64 x 2560, MLP 3 x 2560 x
	 * 6400, two norms; 73448 x 2560 and a final norm */
	CHECK_U64(count("../tests/configs/minicpm3-4b").total,
		  62ULL * (2560ULL * 768 + 768 + 768ULL * 3840 + 2560ULL * 288 +
			   256 + 256ULL * 5120 + 2560ULL * 2560 +
			   3ULL * 2560 * 6400 + 2 * 2560) +
			  73448ULL * 2560 + 2560);

	/* GPT-Neo 125M ("125M", tied): learned positions 2048 x 768; per
	 * layer q, k, v 768^2 unbiased, out_proj 768^2 and its bias, the MLP
	 * 2 x 768 x 3072 and its biases, two LayerNorms; a final LayerNorm */
	CHECK_U64(count("../tests/configs/gpt-neo-125m").total,
		  50257ULL * 768 + 2048ULL * 768 +
			  12ULL * (4ULL * 768 * 768 + 768 +
				   2ULL * 768 * 3072 + 3072 + 768 + 4 * 768) +
			  2 * 768);
	/* OPT-350m (tied): a 512-wide embedding, projected in and out of
	 * 1024; learned positions 2050 x 1024; per layer q, k, v, o 1024^2
	 * and fc1, fc2 1024 x 4096, all biased, two LayerNorms; no final
	 * norm */
	CHECK_U64(count("../tests/configs/opt-350m").total,
		  50272ULL * 512 + 2ULL * 512 * 1024 + 2050ULL * 1024 +
			  24ULL * (4ULL * 1025 * 1024 + 2ULL * 1024 * 4096 +
				   4096 + 1024 + 4 * 1024));

	/* XGLM 1.7B (tied, sinusoidal positions): per layer q, k, v, o
	 * 2048^2 and their biases, fc1 and fc2 2048 x 8192 and theirs, two
	 * LayerNorms; a final LayerNorm */
	CHECK_U64(count("../tests/configs/xglm-1.7b").total,
		  256008ULL * 2048 +
			  24ULL * (4ULL * 2049 * 2048 + 2ULL * 2048 * 8192 +
				   8192 + 2048 + 4 * 2048) +
			  2 * 2048);

	/* Qwen-7B (the first, "7.7B", untied): c_attn 4096 x 12288 and its
	 * bias, c_proj 4096 x 4096, w1, w2 and c_proj of 11008 (half the
	 * config's 22016), two norms a layer */
	CHECK_U64(count("../tests/configs/qwen-7b").total,
		  32ULL * (4097ULL * 12288 + 4096ULL * 4096 +
			   3ULL * 4096 * 11008 + 2 * 4096) +
			  2ULL * 151936 * 4096 + 4096);

	/* Zamba 7B (tied): 76 Mamba-1 mixers (in_proj 3712 x 14848, conv
	 * 7424 x 5, x_proj 7424 x (232 + 32), dt_proj 232 x 7424 and its
	 * bias, A and D 7424 x 17, out_proj 7424 x 3712) with a norm each;
	 * one shared block (q, k, v over 7424 inputs, 3 x 7424 outputs; o
	 * 7424 x 3712; MLP 3 x 3712 x 14848; norms 3 x 3712) taken by 13
	 * attention layers, each with a linear 3712 x 3712 */
	CHECK_U64(count("../tests/configs/zamba-7b").total,
		  76ULL * (3712ULL * 14848 + 7424 * 5 + 7424 * 264 +
			   233ULL * 7424 + 7424 * 17 + 7424ULL * 3712 +
			   3712) +
			  7424ULL * 22272 + 7424ULL * 3712 +
			  3ULL * 3712 * 14848 + 3 * 3712 +
			  13ULL * 3712 * 3712 + 32000ULL * 3712 + 3712);

	/* MiniMax's lightning attention (layer 0): qkv and the output gate
	 * 64 x 4 x 64, a norm of 64, out_proj 64 x 64, two norms; experts 4
	 * x 3 x 64 x 32 and a router of 4, 2 of them a token */
	struct kv_model *mm = test_parse(
		"{\"model_type\":\"minimax\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"num_key_value_heads\":2,\"head_dim\":16,"
		"\"intermediate_size\":32,\"num_local_experts\":4,"
		"\"num_experts_per_tok\":2,\"attn_type_list\":[0,1]}");
	if (mm) {
		struct kv_params lp;
		CHECK(kv_layer_params(mm, 0, &lp) == 0);
		CHECK_U64(lp.total, 64 * 256 + 64 + 64 * 64 + 2 * 64 + 64 * 4 +
					    4 * 3 * 64 * 32);
		CHECK_U64(lp.active, lp.total - 2 * 3 * 64 * 32);
		kv_model_free(mm);
	}

	/* Step3's queries through share_q_dim 24: 64 x 24, a norm of 24,
	 * 24 x 4 heads x 16; k and v of one group 64 x 32; o 64 x 64; two
	 * norms; a dense MLP 3 x 64 x 128 */
	struct kv_model *st = test_parse(
		"{\"model_type\":\"step3_text\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"num_attention_groups\":1,\"head_dim\":16,"
		"\"intermediate_size\":128,\"share_q_dim\":24}");
	if (st) {
		struct kv_params lp;
		CHECK(kv_layer_params(st, 0, &lp) == 0);
		CHECK_U64(lp.total, 65 * 24 + 24 * 64 + 64 * 32 + 64 * 64 +
					    2 * 64 + 3 * 64 * 128);
		kv_model_free(st);
	}

	/* one Llama 3.1 8B layer by hand: attention 41,943,040 + MLP
	 * 176,160,768 + two RMSNorms 8,192 */
	{
		char err[KV_ERRLEN];
		struct kv_model *m;
		struct kv_params lp;
		CHECK(kv_model_load("configs/llama-3.1-8b.json", &m, err) == 0);
		CHECK(kv_layer_params(m, 0, &lp) == 0);
		CHECK_U64(lp.total, 218112000ULL);
		uint64_t first, last;
		CHECK(kv_model_edge_params(m, &first, &last) == 0);
		CHECK_U64(first, 525336576ULL);
		CHECK_U64(last, 525336576ULL + 4096);
		kv_model_free(m);
	}

	/* weight bytes */
	uint64_t b;
	CHECK(kv_weight_bytes(8030261248ULL, KV_DTYPE_BF16, &b) == 0);
	CHECK_U64(b, 16060522496ULL);
	CHECK(kv_weight_bytes(8030261248ULL, KV_DTYPE_FP8, &b) == 0);
	CHECK_U64(b, 8030261248ULL);
	CHECK(kv_weight_bytes(64, KV_DTYPE_INT4, &b) == 0);
	CHECK_U64(b, 36);
	CHECK(kv_weight_bytes(33, KV_DTYPE_INT4, &b) == 0);
	CHECK_U64(b, 36); /* a partial block is a whole block */
	CHECK(kv_weight_bytes(UINT64_MAX, KV_DTYPE_F32, &b) == KV_ERANGE);
	CHECK(kv_weight_bytes(1, KV_DTYPE_COUNT, &b) == KV_EINVAL);
	return test_done("params");
}
