/*
 * test_ckpt - the engine running a checkpoint's own weights: tiny GPT-2
 * (float32, Conv1D weights, a mask buffer it does not read), Qwen2-style
 * (bfloat16, q/k/v biases, grouped K/V heads, untied head, two shards
 * under an index), Llama (float16, tied head) and Qwen3 (bfloat16,
 * per-head q/k norms, heads wider than hidden / heads) checkpoints written
 * here, run with the cache (a prompt, then a token), and the logits handed
 * with the folder to tests/ref/ref_ckpt.py, which reads the files itself
 * and recomputes them in NumPy the way Transformers' code does. Then each
 * checkpoint the engine must refuse: a tensor missing, of another shape,
 * of a dtype it does not run, and shape overrides. The reference is
 * skipped (77) without python3 and NumPy; the refusals always run.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv/engine.h"
#include "kv/quality.h"
#include "kv/safetensors.h"
#include "engine/kvquant.h"
#include "st_write.h"
#include "test.h"

#define TOL "1e-5"
#define MAXT 64

static char root[] = "/tmp/kvtest-ckpt-XXXXXX";
static uint64_t rng = 88172645463325252ULL;

static float uniform(float a)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return a * ((float)(rng >> 40) * (1.0f / 8388608.0f) - 1.0f);
}

/* A checkpoint being written: its tensors, values drawn. */
struct ck {
	struct st_w t[MAXT];
	void *buf[MAXT];
	int n;
	const char *dtype;
};

/* Adds tensor `name` of shape (r[, c]) to k: gains near 1 when gain. */
static void put(struct ck *k, const char *name, uint64_t r, uint64_t c,
		bool gain)
{
	uint64_t n = r * (c ? c : 1);
	int wide = !strcmp(k->dtype, "F32");
	void *b = malloc(n * (wide ? 4 : 2));
	for (uint64_t i = 0; i < n; i++) {
		float v = gain ? 1 + uniform(0.1f) : uniform(0.08f);
		if (wide)
			((float *)b)[i] = v;
		else
			((uint16_t *)b)[i] = !strcmp(k->dtype, "BF16")
						     ? kv_f32_to_bf16(v)
						     : kv_f32_to_f16(v);
	}
	k->buf[k->n] = b;
	k->t[k->n] = (struct st_w){strdup(name), k->dtype, {r, c}, c ? 2 : 1,
				   b, n * (wide ? 4 : 2)};
	k->n++;
}

static void done(struct ck *k)
{
	for (int i = 0; i < k->n; i++) {
		free(k->buf[i]);
		free((char *)k->t[i].name);
	}
	k->n = 0;
}

static char *path(const char *dir, const char *name)
{
	static char p[2][512];
	static int i;
	i ^= 1;
	snprintf(p[i], sizeof p[i], "%s/%s/%s", root, dir, name);
	return p[i];
}

static void write_text(const char *file, const char *text)
{
	FILE *f = fopen(file, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static const char gpt2_cfg[] =
	"{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":64,\"n_head\":4,"
	"\"n_inner\":96,\"vocab_size\":200,\"n_positions\":16,"
	"\"layer_norm_epsilon\":1e-5}";

static void gpt2(const char *dir)
{
	struct ck k = {.dtype = "F32"};
	char n[64];
	mkdir(path(dir, ""), 0700);
	write_text(path(dir, "config.json"), gpt2_cfg);
	put(&k, "wte.weight", 200, 64, false);
	put(&k, "wpe.weight", 16, 64, false);
	for (int l = 0; l < 2; l++) {
		static const struct {
			const char *s;
			uint64_t r, c;
			bool g;
		} p[] = {{"ln_1.weight", 64, 0, true}, {"ln_1.bias", 64, 0, 0},
			 {"attn.c_attn.weight", 64, 192, 0},
			 {"attn.c_attn.bias", 192, 0, 0},
			 {"attn.c_proj.weight", 64, 64, 0},
			 {"attn.c_proj.bias", 64, 0, 0},
			 {"attn.bias", 16, 16, 0}, /* a mask, not read */
			 {"ln_2.weight", 64, 0, true}, {"ln_2.bias", 64, 0, 0},
			 {"mlp.c_fc.weight", 64, 96, 0},
			 {"mlp.c_fc.bias", 96, 0, 0},
			 {"mlp.c_proj.weight", 96, 64, 0},
			 {"mlp.c_proj.bias", 64, 0, 0}};
		for (size_t i = 0; i < sizeof p / sizeof *p; i++) {
			snprintf(n, sizeof n, "h.%d.%s", l, p[i].s);
			put(&k, n, p[i].r, p[i].c, p[i].g);
		}
	}
	put(&k, "ln_f.weight", 64, 0, true);
	put(&k, "ln_f.bias", 64, 0, false);
	st_write(path(dir, "model.safetensors"), k.t, k.n);
	done(&k);
}

/* How a Llama-family checkpoint is written: dtype, K/V heads, head size
 * (0: 16), q/k/v biases (Qwen2), Qwen3's per-head q/k norms (of `norm`
 * values; 0: a head's), a tied head, two shards. */
struct shape_of {
	const char *dtype;
	uint32_t kv, hd, norm;
	bool bias, qk_norm, tied, sharded;
};

/* A Llama-family checkpoint: dim 96, 6 heads of hd (16 unless said), kv
 * K/V heads, ffn 80, vocab 256, 2 layers; shards: layer 1 in its own
 * file. */
static void llama(const char *dir, const char *cfg, struct shape_of sh)
{
	struct ck k = {.dtype = sh.dtype};
	uint64_t hd = sh.hd ? sh.hd : 16, q = 6 * hd, kv = sh.kv * hd;
	uint64_t norm = sh.norm ? sh.norm : hd;
	char n[96];
	mkdir(path(dir, ""), 0700);
	write_text(path(dir, "config.json"), cfg);
	put(&k, "model.embed_tokens.weight", 256, 96, false);
	put(&k, "model.norm.weight", 96, 0, true);
	if (!sh.tied)
		put(&k, "lm_head.weight", 256, 96, false);
	char index[8192] = "{\"weight_map\":{";
	for (int l = 0; l < 2; l++) {
		struct {
			const char *s;
			uint64_t r, c;
			bool g;
			bool on;
		} p[] = {{"input_layernorm.weight", 96, 0, true, 1},
			 {"self_attn.q_proj.weight", q, 96, 0, 1},
			 {"self_attn.k_proj.weight", kv, 96, 0, 1},
			 {"self_attn.v_proj.weight", kv, 96, 0, 1},
			 {"self_attn.o_proj.weight", 96, q, 0, 1},
			 {"post_attention_layernorm.weight", 96, 0, true, 1},
			 {"mlp.gate_proj.weight", 80, 96, 0, 1},
			 {"mlp.up_proj.weight", 80, 96, 0, 1},
			 {"mlp.down_proj.weight", 96, 80, 0, 1},
			 {"self_attn.q_proj.bias", q, 0, 0, sh.bias},
			 {"self_attn.k_proj.bias", kv, 0, 0, sh.bias},
			 {"self_attn.v_proj.bias", kv, 0, 0, sh.bias},
			 {"self_attn.q_norm.weight", norm, 0, true, sh.qk_norm},
			 {"self_attn.k_norm.weight", norm, 0, true,
			  sh.qk_norm}};
		if (sh.sharded && l == 1) {
			st_write(path(dir, "a.safetensors"), k.t, k.n);
			for (int i = 0; i < k.n; i++)
				snprintf(index + strlen(index),
					 sizeof index - strlen(index),
					 "\"%s\":\"a.safetensors\",",
					 k.t[i].name);
			done(&k);
		}
		for (size_t i = 0; i < sizeof p / sizeof *p; i++) {
			if (!p[i].on)
				continue;
			snprintf(n, sizeof n, "model.layers.%d.%s", l, p[i].s);
			put(&k, n, p[i].r, p[i].c, p[i].g);
		}
	}
	if (sh.sharded) {
		st_write(path(dir, "b.safetensors"), k.t, k.n);
		for (int i = 0; i < k.n; i++)
			snprintf(index + strlen(index),
				 sizeof index - strlen(index),
				 "%s\"%s\":\"b.safetensors\"", i ? "," : "",
				 k.t[i].name);
		strcat(index, "}}");
		write_text(path(dir, "model.safetensors.index.json"), index);
	} else {
		st_write(path(dir, "model.safetensors"), k.t, k.n);
	}
	done(&k);
}

static int engine_of(const char *dir, struct kv_model **m, struct kv_st **ck,
		     struct kv_engine_opts *o, struct kv_engine **e,
		     char *err)
{
	int rc = kv_model_load(path(dir, "config.json"), m, err);
	if (rc)
		return rc;
	/* as kvdecode finds it: the folder of the config */
	if ((rc = kv_st_beside((*m)->path, 1, ck, err)) || !*ck) {
		kv_model_free(*m);
		return rc ? rc : KV_EIO;
	}
	o->ckpt = *ck;
	if ((rc = kv_engine_new(*m, o, e, err))) {
		kv_st_close(*ck);
		kv_model_free(*m);
	}
	return rc;
}

/* Runs the checkpoint in dir with weights kept as wt: a prompt of 9,
 * then one token, for two sequences; the reference's status. */
static int check(const char *dir, enum kv_dtype wt)
{
	struct kv_model *m;
	struct kv_st *ck;
	struct kv_engine *e;
	char err[KV_ERRLEN], cases[] = "/tmp/kv-ckref-XXXXXX";
	struct kv_engine_opts o = kv_engine_opts_default();
	o.users = 2;
	o.max_ctx = 10;
	o.threads = 2;
	o.weights_dtype = wt;
	if (engine_of(dir, &m, &ck, &o, &e, err)) {
		fprintf(stderr, "%s: %s\n", dir, err);
		return 1;
	}
	uint64_t v = kv_engine_get_model(e)->vocab;
	uint32_t tok[2][10], chunk[18];
	float lg[2 * 256];
	for (int u = 0; u < 2; u++)
		for (int i = 0; i < 10; i++)
			tok[u][i] = (uint32_t)(7 + 31 * u + 13 * i) % v;
	for (int u = 0; u < 2; u++)
		memcpy(chunk + u * 9, tok[u], 9 * sizeof *chunk);
	CHECK(kv_engine_forward(e, chunk, 9, 0, true, lg) == 0);
	chunk[0] = tok[0][9];
	chunk[1] = tok[1][9];
	CHECK(kv_engine_forward(e, chunk, 1, 9, true, lg) == 0);
	int fd = mkstemp(cases);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f) {
		fprintf(f, "dir %s\n", path(dir, ""));
		test_put_seqs(f, &tok[0][0], 2, 10, 10, lg, v);
		fclose(f);
	}
	kv_engine_free(e);
	kv_st_close(ck);
	kv_model_free(m);
	int status = f ? test_numpy("ref_ckpt.py", cases, TOL) : 77;
	unlink(cases);
	return f ? status : 1;
}

/* What the engine refuses: err must hold `want`. */
static void refused(const char *dir, const struct kv_engine_opts *base,
		    int code, const char *want)
{
	struct kv_model *m;
	struct kv_st *ck;
	struct kv_engine *e = NULL;
	char err[KV_ERRLEN] = "";
	struct kv_engine_opts o = *base;
	int rc = engine_of(dir, &m, &ck, &o, &e, err);
	CHECK(rc == code && e == NULL);
	CHECK_HAS(err, want);
	if (!rc)
		kv_engine_free(e);
}

static void bad(void)
{
	struct kv_engine_opts o = kv_engine_opts_default();
	o.max_ctx = 8;
	struct ck k = {.dtype = "F32"};
	/* GPT-2 with a tensor missing, then one of another shape, then
	 * one of a dtype the engine does not run */
	gpt2("bad");
	put(&k, "wte.weight", 200, 64, false);
	st_write(path("bad", "model.safetensors"), k.t, 1);
	done(&k);
	refused("bad", &o, KV_EINVAL, "bad/model.safetensors: no tensor "
				      "wpe.weight");
	o.max_ctx = 32; /* past the 16 positions the checkpoint keeps */
	gpt2("bad");
	refused("bad", &o, KV_EINVAL, "32 positions, beyond the 16 the "
				      "checkpoint's learned positions cover");
	o.max_ctx = 8;
	o.layers = 1;
	refused("bad", &o, KV_EUNSUP, "a checkpoint's weights fix the "
				      "model's shape");
	/* its own layers, vocabulary and K/V heads are no other shape */
	o.layers = 2;
	o.vocab = 200;
	o.kv_heads = 4;
	struct kv_model *m;
	struct kv_st *ck;
	struct kv_engine *e;
	char err[KV_ERRLEN];
	int rc = engine_of("bad", &m, &ck, &o, &e, err);
	CHECK(rc == 0);
	if (!rc) {
		kv_engine_free(e);
		kv_st_close(ck);
		kv_model_free(m);
	}
	o.kv_heads = 0;
	o.vocab = 0;
	o.layers = 0;
	k.dtype = "F32";
	put(&k, "wte.weight", 64, 200, false);
	st_write(path("bad", "model.safetensors"), k.t, 1);
	done(&k);
	char want[1200];
	snprintf(want, sizeof want, "bad/model.safetensors: wte.weight: shape "
		 "[64, 200], where %s gives [200, 64]",
		 path("bad", "config.json"));
	refused("bad", &o, KV_EINVAL, want);
	write_text(path("bad", "model.safetensors"), "");
	int8_t q[200 * 64] = {0};
	struct st_w i8 = {"wte.weight", "I8", {200, 64}, 2, q, sizeof q};
	st_write(path("bad", "model.safetensors"), &i8, 1);
	refused("bad", &o, KV_EUNSUP, "bad/model.safetensors: wte.weight: "
				      "I8, a dtype the engine does not run "
				      "(F32, F16, BF16)");
}

/* Qwen3 without its q and k norms, with norms the size of the whole
 * projection (as OLMo 2's) instead of a head's, and sharded without
 * them: refused, naming the file and the tensor. */
static void bad_qwen3(const char *cfg)
{
	struct kv_engine_opts o = kv_engine_opts_default();
	o.max_ctx = 8;
	llama("bad-qwen3", cfg, (struct shape_of){"F32", .kv = 2, .hd = 24});
	refused("bad-qwen3", &o, KV_EINVAL,
		"bad-qwen3/model.safetensors: no tensor "
		"model.layers.0.self_attn.q_norm.weight");
	llama("bad-qwen3", cfg,
	      (struct shape_of){"F32", .kv = 2, .hd = 24, .norm = 144,
				.qk_norm = 1});
	char want[1200];
	snprintf(want, sizeof want, "bad-qwen3/model.safetensors: "
		 "model.layers.0.self_attn.q_norm.weight: shape [144], where "
		 "%s gives [24]", path("bad-qwen3", "config.json"));
	refused("bad-qwen3", &o, KV_EINVAL, want);
	llama("bad-qwen3-sharded", cfg,
	      (struct shape_of){"F32", .kv = 2, .hd = 24, .sharded = 1});
	refused("bad-qwen3-sharded", &o, KV_EINVAL,
		"bad-qwen3-sharded/model.safetensors.index.json: no tensor "
		"model.layers.0.self_attn.q_norm.weight");
}

/* Perplexity by hand: tests/ckpt/tiny's weights are all zero, so every
 * logit is 0, every token has p = 1/256 and the text's perplexity is the
 * vocabulary's 256 exactly; an fp8 cache of zeros changes nothing. */
static void perplexity(void)
{
	struct kv_model *m;
	struct kv_st *ck;
	char err[KV_ERRLEN];
	uint32_t ids[] = {1, 7, 42, 255, 3, 9};
	struct kv_ppl base, f8;
	float *ref = malloc(5 * 256 * sizeof *ref);
	CHECK(kv_model_load("tests/ckpt/tiny/config.json", &m, err) == 0);
	CHECK(kv_st_beside(m->path, 1, &ck, err) == 0 && ck);
	struct kv_engine_opts o = kv_engine_opts_default();
	o.ckpt = ck;
	CHECK(kv_ppl_run(m, &o, ids, 6, NULL, ref, &base, err) == 0);
	CHECK_U64(base.tokens, 5);
	CHECK_NEAR(base.nll, 5 * log(256.0), 1e-9);
	CHECK_NEAR(kv_ppl_value(&base), 256, 1e-9);
	o.k_dtype = o.v_dtype = KV_DTYPE_FP8;
	CHECK(kv_ppl_run(m, &o, ids, 6, ref, NULL, &f8, err) == 0);
	CHECK_NEAR(kv_ppl_value(&f8), 256, 1e-9);
	CHECK(f8.q.steps == 5 && f8.q.agree == 5 && f8.q.max_abs == 0);
	CHECK(kv_ppl_run(m, &o, ids, 1, NULL, NULL, &f8, err) == KV_EINVAL);
	CHECK_HAS(err, "a text of 1 token scores nothing");
	/* the last id is only scored, and must be a row of the logits too */
	ids[5] = 256;
	CHECK(kv_ppl_run(m, &o, ids, 6, NULL, NULL, &f8, err) == KV_EINVAL);
	CHECK_STR(err, "the text's token 5 is id 256, not below the model's "
		       "256");
	free(ref);
	kv_st_close(ck);
	kv_model_free(m);
}

/* A config at odds with its checkpoint's tensors, named before anything
 * is allocated (kvdecode holds a prompt to the vocabulary after it). */
static void held_to_config(void)
{
	struct kv_model *m;
	struct kv_st *ck;
	char err[KV_ERRLEN];
	CHECK(kv_model_load("tests/ckpt/tiny-gpt2/config.json", &m, err) == 0);
	CHECK(kv_st_beside(m->path, 0, &ck, err) == 0 && ck);
	CHECK(kv_engine_ckpt_check(m, ck, err) == 0);
	kv_st_close(ck);
	kv_model_free(m);
	CHECK(kv_model_load("tests/ckpt/bad-vocab-config/config.json", &m,
			    err) == 0);
	CHECK(kv_st_beside(m->path, 0, &ck, err) == 0 && ck);
	CHECK(kv_engine_ckpt_check(m, ck, err) == KV_EINVAL);
	CHECK_STR(err, "tests/ckpt/bad-vocab-config/model.safetensors: "
		       "wte.weight: shape [320, 32], where "
		       "tests/ckpt/bad-vocab-config/config.json gives [300, "
		       "32]");
	kv_st_close(ck);
	kv_model_free(m);
}

int main(void)
{
	static const char qwen2[] =
		"{\"model_type\":\"qwen2\",\"num_hidden_layers\":2,"
		"\"hidden_size\":96,\"num_attention_heads\":6,"
		"\"num_key_value_heads\":2,\"intermediate_size\":80,"
		"\"vocab_size\":256,\"rope_theta\":500.0,"
		"\"tie_word_embeddings\":false,\"rms_norm_eps\":1e-5,"
		"\"max_position_embeddings\":64}";
	static const char tiny_llama[] =
		"{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
		"\"hidden_size\":96,\"num_attention_heads\":6,"
		"\"num_key_value_heads\":6,\"intermediate_size\":80,"
		"\"vocab_size\":256,\"tie_word_embeddings\":true,"
		"\"rms_norm_eps\":1e-6,\"max_position_embeddings\":64}";
	/* Llama 3's rope_scaling, its original 16 positions making the
	 * scaling matter at these few: the wavelength of the first pair
	 * (6.3) is blended, of the others (20 and up) divided by 8 */
	static const char llama3[] =
		"{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
		"\"hidden_size\":96,\"num_attention_heads\":6,"
		"\"num_key_value_heads\":2,\"intermediate_size\":80,"
		"\"vocab_size\":256,\"tie_word_embeddings\":false,"
		"\"rms_norm_eps\":1e-5,\"max_position_embeddings\":128,"
		"\"rope_theta\":10000.0,\"rope_scaling\":{\"factor\":8.0,"
		"\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,"
		"\"original_max_position_embeddings\":16,"
		"\"rope_type\":\"llama3\"}}";
	/* Qwen3: heads of 24 where 96 / 6 is 16, q and k normed per head */
	static const char qwen3[] =
		"{\"model_type\":\"qwen3\",\"num_hidden_layers\":2,"
		"\"hidden_size\":96,\"num_attention_heads\":6,"
		"\"num_key_value_heads\":2,\"head_dim\":24,"
		"\"intermediate_size\":80,\"vocab_size\":256,"
		"\"rope_theta\":10000.0,\"tie_word_embeddings\":true,"
		"\"rms_norm_eps\":1e-6,\"attention_bias\":false,"
		"\"max_position_embeddings\":64}";
	if (!mkdtemp(root))
		return 1;
	llama("llama3", llama3, (struct shape_of){"F32", .kv = 2});
	char yarn[sizeof llama3 + 8];
	snprintf(yarn, sizeof yarn, "%s", llama3);
	memcpy(strstr(yarn, "\"llama3\"}"), "\"yarn\"}}\0", 10);
	llama("yarn", yarn, (struct shape_of){"F32", .kv = 2});
	gpt2("gpt2");
	llama("qwen2", qwen2,
	      (struct shape_of){"BF16", .kv = 2, .bias = 1, .sharded = 1});
	llama("llama", tiny_llama,
	      (struct shape_of){"F16", .kv = 6, .tied = 1});
	llama("qwen3", qwen3,
	      (struct shape_of){"BF16", .kv = 2, .hd = 24, .qk_norm = 1,
				.tied = 1});
	/* f32 weights from each; then the 16-bit ones kept as stored, read
	 * by the products as they are: the same logits */
	int rc[8] = {check("gpt2", KV_DTYPE_F32), check("qwen2", KV_DTYPE_F32),
		     check("llama", KV_DTYPE_F32),
		     check("qwen2", KV_DTYPE_BF16),
		     check("llama", KV_DTYPE_F16),
		     check("llama3", KV_DTYPE_F32),
		     check("qwen3", KV_DTYPE_F32),
		     check("qwen3", KV_DTYPE_BF16)};
	bad();
	bad_qwen3(qwen3);
	struct kv_engine_opts o = kv_engine_opts_default();
	o.max_ctx = 8;
	refused("yarn", &o, KV_EUNSUP, "rope_scaling: type 'yarn': the "
				       "engine turns positions plainly");
	perplexity();
	held_to_config();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd))
		return 1;
	for (int i = 0; i < 8; i++) {
		if (rc[i] != 77)
			CHECK(rc[i] == 0);
	}
	if (rc[0] == 77)
		printf("test_ckpt: no NumPy: the engine's logits were not "
		       "checked against the reference\n");
	int st = test_done("test_ckpt");
	return st ? st : rc[0] == 77 ? 77 : 0;
}
