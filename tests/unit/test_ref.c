/*
 * test_ref.c - the engine against an independent reference: runs a tiny
 * GPT-2, a tiny Llama-style model (grouped KV heads, q/k/v biases) and a
 * tiny Qwen3 (per-head q/k norms, heads wider than hidden / heads) with
 * the cache, a prompt then one decoded token, with float32 weights and
 * with bf16 and f16 ones (the reference rounds its draws the same way),
 * and hands the tokens and logits to tests/ref/ref_forward.py, which
 * rebuilds the weights from the documented generator and recomputes the
 * logits in NumPy. Skipped (77) without python3 and NumPy.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kv/engine.h"
#include "test.h"

#define TOL "2e-5"

static int check(const char *json, uint32_t kv_heads, enum kv_dtype wt)
{
	struct kv_model *m;
	struct kv_engine *e;
	char err[KV_ERRLEN], path[] = "/tmp/kv-ref-XXXXXX";
	if (kv_model_parse(json, strlen(json), "tiny", &m, err))
		return 1;
	struct kv_engine_opts o = kv_engine_opts_default();
	o.users = 2;
	o.max_ctx = 12;
	o.kv_heads = kv_heads;
	o.seed = 12345;
	o.threads = 2;
	o.weights_dtype = wt;
	if (kv_engine_new(m, &o, &e, err)) {
		fprintf(stderr, "%s\n", err);
		kv_model_free(m);
		return 1;
	}
	const struct kv_model *em = kv_engine_get_model(e);
	uint64_t v = em->vocab;
	uint32_t tok[2][12], chunk[22];
	float lg[2 * 256];
	for (int u = 0; u < 2; u++)
		for (int i = 0; i < 11; i++)
			tok[u][i] = kv_rand_token(5, (uint64_t)u,
						  (uint64_t)i, v);
	for (int u = 0; u < 2; u++)
		memcpy(chunk + u * 10, tok[u], 10 * sizeof *chunk);
	CHECK(kv_engine_forward(e, chunk, 10, 0, true, lg) == 0);
	chunk[0] = tok[0][10];
	chunk[1] = tok[1][10];
	CHECK(kv_engine_forward(e, chunk, 1, 10, true, lg) == 0);

	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		kv_engine_free(e);
		kv_model_free(m);
		return 1;
	}
	const struct kv_layer *l = &em->layers[0];
	bool gpt2 = em->family == KV_FAMILY_GPT2;
	fprintf(f, "family %s\nseed %llu\nlayers %u\ndim %llu\nheads %u\n"
		   "kv_heads %u\nhd %u\nffn %llu\nvocab %llu\neps %.17g\n"
		   "theta %.17g\nqkv_bias %d\no_bias %d\nmlp_bias %d\n"
		   "tied %d\nqk_norm %d\nweights %s\n",
		gpt2 ? "gpt2" : "llama", (unsigned long long)o.seed,
		em->n_layers, (unsigned long long)em->hidden, l->q_heads,
		l->kv_heads, l->head_dim_k, (unsigned long long)l->ffn_dim,
		(unsigned long long)v, em->norm_eps,
		em->rope_theta > 0 ? em->rope_theta : 10000, em->qkv_bias,
		em->o_bias, em->mlp_bias, gpt2 || em->tie_embeddings,
		em->qk_norm, kv_dtype_name(wt));
	test_put_seqs(f, &tok[0][0], 2, 12, 11, lg, v);
	fclose(f);
	kv_engine_free(e);
	kv_model_free(m);
	int status = test_numpy("ref_forward.py", path, TOL);
	unlink(path);
	return status;
}

int main(void)
{
	static const char gpt2[] =
		"{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":64,"
		"\"n_head\":4,\"n_inner\":96,\"vocab_size\":200,"
		"\"n_positions\":8}";
	static const char llama[] =
		"{\"model_type\":\"qwen2\",\"num_hidden_layers\":2,"
		"\"hidden_size\":96,\"num_attention_heads\":6,"
		"\"num_key_value_heads\":2,\"intermediate_size\":80,"
		"\"vocab_size\":256,\"rope_theta\":500.0,"
		"\"tie_word_embeddings\":false,\"rms_norm_eps\":1e-5}";
	/* Qwen3: per-head q and k norms, heads of 24 (not 96 / 6) */
	static const char qwen3[] =
		"{\"model_type\":\"qwen3\",\"num_hidden_layers\":2,"
		"\"hidden_size\":96,\"num_attention_heads\":6,"
		"\"num_key_value_heads\":2,\"head_dim\":24,"
		"\"intermediate_size\":80,\"vocab_size\":256,"
		"\"rope_theta\":1000.0,\"tie_word_embeddings\":true,"
		"\"rms_norm_eps\":1e-6}";
	/* f32 weights; then bf16 and f16 ones, kept as stored */
	int rc[7] = {check(gpt2, 0, KV_DTYPE_F32),
		     check(llama, 0, KV_DTYPE_F32),
		     check(llama, 3, KV_DTYPE_F32),
		     check(gpt2, 0, KV_DTYPE_BF16),
		     check(llama, 3, KV_DTYPE_F16),
		     check(qwen3, 0, KV_DTYPE_F32),
		     check(qwen3, 0, KV_DTYPE_BF16)};
	for (int i = 0; i < 7; i++) {
		if (rc[i] == 77)
			return 77;
		CHECK(rc[i] == 0);
	}
	return test_done("test_ref");
}
