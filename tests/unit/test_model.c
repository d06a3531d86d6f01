/*
 * test_model.c - the config reader: each shipped config read as its family's
 * reference implementation reads it, the defaults of absent fields, and the
 * message of each kind of bad field.
 */
#include <stdlib.h>
#include <unistd.h>

#include "base/json.h"
#include "kv/model.h"
#include "model/model_int.h"
#include "test.h"

/* The message a bad config gives, or "" when it loads. */
static const char *bad(const char *json)
{
	static char err[KV_ERRLEN];
	struct kv_model *m = NULL;
	err[0] = '\0';
	if (kv_model_parse(json, strlen(json), "x.json", &m, err) == 0) {
		kv_model_free(m);
		return "";
	}
	CHECK(m == NULL);
	return err;
}

static uint32_t count(const struct kv_model *m, enum kv_attn a)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->n_layers; i++)
		n += m->layers[i].attn == a;
	return n;
}

static void test_shipped(void)
{
	struct kv_model *m;
	if ((m = test_load("gpt2"))) {
		CHECK(m->family == KV_FAMILY_GPT2);
		CHECK_U64(m->n_layers, 12);
		CHECK_U64(m->head_dim, 64);
		CHECK_U64(m->intermediate, 3072); /* n_inner null: 4 x 768 */
		CHECK(m->dtype == KV_DTYPE_F32 && !m->dtype_given);
		CHECK(m->tie_embeddings && m->layernorm && !m->gated_mlp);
		CHECK_U64(m->max_pos, 1024);
		kv_model_free(m);
	}
	if ((m = test_load("llama-3.1-8b"))) {
		CHECK_U64(m->n_kv_heads, 8);
		CHECK_U64(m->vocab, 128256);
		CHECK(!m->tie_embeddings && m->gated_mlp && !m->layernorm);
		CHECK_U64(count(m, KV_ATTN_FULL), 32);
		kv_model_free(m);
	}
	if ((m = test_load("falcon-7b"))) { /* multi_query: one KV head */
		CHECK_U64(m->n_kv_heads, 1);
		CHECK_U64(m->head_dim, 64);
		CHECK(m->parallel_block && m->tie_embeddings);
		kv_model_free(m);
	}
	if ((m = test_load("gemma-2-9b"))) { /* head_dim 256 != 3584 / 16 */
		CHECK_U64(m->head_dim, 256);
		CHECK_U64(count(m, KV_ATTN_SLIDING), 21);
		CHECK(m->layers[0].attn == KV_ATTN_SLIDING);
		CHECK_U64(m->layers[0].window, 4096);
		kv_model_free(m);
	}
	if ((m = test_load("gemma-3-27b"))) { /* nested text_config, 5:1 */
		CHECK_U64(m->n_layers, 62);
		CHECK_U64(m->head_dim, 128);
		CHECK_U64(count(m, KV_ATTN_FULL), 10);
		CHECK(m->layers[5].attn == KV_ATTN_FULL);
		CHECK_U64(m->layers[0].window, 1024);
		CHECK_U64(m->vocab, 262208); /* absent: the class default */
		CHECK(m->dtype == KV_DTYPE_BF16);
		kv_model_free(m);
	}
	if ((m = test_load("qwen2.5-7b"))) { /* window set but not used */
		CHECK_U64(count(m, KV_ATTN_SLIDING), 0);
		CHECK(m->qkv_bias && !m->o_bias);
		kv_model_free(m);
	}
	if ((m = test_load("qwen3-30b-a3b"))) {
		CHECK_U64(m->n_experts, 128);
		CHECK_U64(m->n_experts_active, 8);
		CHECK_U64(m->layers[0].ffn_dim, 768);
		CHECK(m->layers[0].mlp == KV_MLP_MOE && m->qk_norm);
		kv_model_free(m);
	}
	if ((m = test_load("mixtral-8x7b"))) {
		CHECK_U64(m->n_experts, 8);
		CHECK_U64(m->n_experts_active, 2);
		CHECK_U64(count(m, KV_ATTN_SLIDING), 0); /* window null */
		kv_model_free(m);
	}
	if ((m = test_load("mistral-7b-v0.1"))) {
		CHECK_U64(count(m, KV_ATTN_SLIDING), 32);
		kv_model_free(m);
	}
	if ((m = test_load("phi-3-mini-4k"))) {
		CHECK_U64(count(m, KV_ATTN_SLIDING), 32);
		CHECK_U64(m->layers[0].window, 2047);
		kv_model_free(m);
	}
	if ((m = test_load("deepseek-v2-lite"))) {
		CHECK_U64(m->q_lora_rank, 0); /* null: plain q projection */
		CHECK_U64(m->kv_lora_rank, 512);
		CHECK_U64(count(m, KV_ATTN_MLA), 27);
		CHECK(m->layers[0].mlp == KV_MLP_DENSE); /* first_k_dense 1 */
		CHECK(m->layers[1].mlp == KV_MLP_MOE);
		CHECK_U64(m->n_shared_experts, 2);
		kv_model_free(m);
	}
	if ((m = test_load("deepseek-v3"))) {
		CHECK_U64(m->q_lora_rank, 1536);
		CHECK_U64(m->head_dim, 192);
		CHECK_U64(m->head_dim_v, 128);
		CHECK(m->layers[2].mlp == KV_MLP_DENSE);
		CHECK(m->layers[3].mlp == KV_MLP_MOE);
		CHECK_U64(m->n_mtp_layers, 1);
		kv_model_free(m);
	}
	if ((m = test_load("gpt-oss-20b"))) {
		CHECK_U64(count(m, KV_ATTN_SLIDING), 12);
		CHECK_U64(m->layers[0].window, 128);
		CHECK(m->dtype == KV_DTYPE_BF16); /* no dtype in the config */
		CHECK_U64(m->n_experts, 32);
		kv_model_free(m);
	}
	if ((m = test_load("llama-4-scout"))) {
		CHECK_U64(count(m, KV_ATTN_CHUNKED), 36);
		CHECK(m->layers[3].attn == KV_ATTN_FULL);
		CHECK_U64(m->layers[0].window, 8192);
		CHECK_U64(m->n_experts, 16);
		kv_model_free(m);
	}
	if ((m = test_load("openelm-270m"))) {
		CHECK_U64(m->layers[0].kv_heads, 3);
		CHECK_U64(m->layers[15].kv_heads, 5);
		CHECK_U64(m->layers[0].q_heads, 12);
		kv_model_free(m);
	}
	if ((m = test_load("jamba-v0.1"))) {
		CHECK_U64(count(m, KV_ATTN_FULL), 4);
		CHECK_U64(count(m, KV_ATTN_NONE), 28);
		CHECK_U64(m->ssm_d_inner, 8192);
		CHECK_U64(m->ssm_dt_rank, 256);
		CHECK(m->layers[1].mlp == KV_MLP_MOE);
		CHECK(m->layers[0].mlp == KV_MLP_DENSE);
		kv_model_free(m);
	}
}

static void test_defaults(void)
{
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	/* Llama: KV heads = heads, head_dim = hidden / heads, no window */
	const char *j = "{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
			"\"hidden_size\":256,\"num_attention_heads\":8}";
	CHECK(kv_model_parse(j, strlen(j), "x", &m, err) == 0);
	if (m) {
		CHECK_U64(m->n_kv_heads, 8);
		CHECK_U64(m->head_dim, 32);
		CHECK_U64(m->max_pos, 2048);
		CHECK_U64(m->layers[0].window, 0);
		kv_model_free(m);
	}
	/* Qwen3: head_dim 128 whatever the width */
	j = "{\"model_type\":\"qwen3\",\"num_hidden_layers\":1,"
	    "\"hidden_size\":256,\"num_attention_heads\":8}";
	CHECK(kv_model_parse(j, strlen(j), "x", &m, err) == 0);
	if (m) {
		CHECK_U64(m->head_dim, 128);
		kv_model_free(m);
	}
	/* GPT-2 names without model_type */
	j = "{\"n_layer\":2,\"n_embd\":64,\"n_head\":4}";
	CHECK(kv_model_parse(j, strlen(j), "x", &m, err) == 0);
	if (m) {
		CHECK(m->family == KV_FAMILY_GPT2);
		CHECK_U64(m->head_dim, 16);
		kv_model_free(m);
	}
	/* Falcon's new architecture keeps num_kv_heads */
	j = "{\"model_type\":\"falcon\",\"num_hidden_layers\":2,"
	    "\"hidden_size\":256,\"num_attention_heads\":8,"
	    "\"new_decoder_architecture\":true,\"num_kv_heads\":2}";
	CHECK(kv_model_parse(j, strlen(j), "x", &m, err) == 0);
	if (m) {
		CHECK_U64(m->n_kv_heads, 2);
		kv_model_free(m);
	}
	/* an unknown model_type is read as Llama-style, with a note */
	j = "{\"model_type\":\"zz\",\"num_hidden_layers\":1,"
	    "\"hidden_size\":64,\"num_attention_heads\":4}";
	CHECK(kv_model_parse(j, strlen(j), "x", &m, err) == 0);
	if (m) {
		CHECK_HAS(m->note, "not a known family");
		kv_model_free(m);
	}
	/* ChatGLM: multi_query_group_num KV heads of kv_channels */
	j = "{\"model_type\":\"chatglm\",\"num_layers\":4,"
	    "\"hidden_size\":256,\"num_attention_heads\":8,"
	    "\"kv_channels\":64,\"multi_query_attention\":true,"
	    "\"multi_query_group_num\":2,\"seq_length\":4096}";
	CHECK(kv_model_parse(j, strlen(j), "x", &m, err) == 0);
	if (m) {
		CHECK_U64(m->n_kv_heads, 2);
		CHECK_U64(m->head_dim, 64);
		CHECK_U64(m->max_pos, 4096);
		CHECK_STR(m->note, "");
		kv_model_free(m);
	}
	/* Cohere 2: one global layer in sliding_window_pattern */
	j = "{\"model_type\":\"cohere2\",\"num_hidden_layers\":8,"
	    "\"hidden_size\":256,\"num_attention_heads\":8,"
	    "\"sliding_window\":64,\"sliding_window_pattern\":4}";
	CHECK(kv_model_parse(j, strlen(j), "x", &m, err) == 0);
	if (m) {
		CHECK(m->layers[2].attn == KV_ATTN_SLIDING);
		CHECK(m->layers[3].attn == KV_ATTN_FULL);
		CHECK(m->layers[7].attn == KV_ATTN_FULL);
		kv_model_free(m);
	}
	/* DeepSeek's descendants are read as DeepSeek */
	j = "{\"model_type\":\"kimi_k2\",\"num_hidden_layers\":2,"
	    "\"hidden_size\":256,\"num_attention_heads\":8,"
	    "\"kv_lora_rank\":64,\"qk_rope_head_dim\":16}";
	CHECK(kv_model_parse(j, strlen(j), "x", &m, err) == 0);
	if (m) {
		CHECK(m->family == KV_FAMILY_DEEPSEEK);
		CHECK(m->layers[1].attn == KV_ATTN_MLA);
		CHECK_U64(m->layers[1].head_dim_k, 80);
		kv_model_free(m);
	}
	CHECK(kv_model_gpt2_small(&m) == 0);
	if (m) {
		CHECK_U64(m->vocab, 50257);
		CHECK_U64(m->intermediate, 3072);
		kv_model_free(m);
	}
}

static void test_errors(void)
{
	CHECK_STR(bad("{\"num_hidden_layers\":2,\"hidden_size\":64}"),
		  "x.json: num_attention_heads: missing; a field that "
		  "defines the model's shape is never guessed");
	CHECK_STR(bad("{\"num_hidden_layers\":2.5,\"hidden_size\":64,"
		      "\"num_attention_heads\":4}"),
		  "x.json: num_hidden_layers: must be a whole number, got 2.5");
	CHECK_STR(bad("{\"num_hidden_layers\":2,\"hidden_size\":64,"
		      "\"num_attention_heads\":4,\"num_key_value_heads\":3}"),
		  "x.json: num_key_value_heads: must divide "
		  "num_attention_heads (4), got 3");
	CHECK_STR(bad("{\"num_hidden_layers\":true,\"hidden_size\":64,"
		      "\"num_attention_heads\":4}"),
		  "x.json: num_hidden_layers: must be a number, got true");
	CHECK_STR(bad("{\"num_hidden_layers\":[2],\"hidden_size\":64,"
		      "\"num_attention_heads\":4}"),
		  "x.json: num_hidden_layers: must be a number, got an array");
	CHECK_STR(bad("{\"num_hidden_layers\":2,\"hidden_size\":1e300,"
		      "\"num_attention_heads\":4}"),
		  "x.json: hidden_size: absurd value, at most 1048576, got "
		  "1.0000000000000001e+300");
	CHECK_STR(bad("\"llama\""), "x.json: not a JSON object, got \"llama\"");
	CHECK_STR(bad("{\"a\": }"),
		  "x.json: not JSON: syntax error at line 1, column 7, near "
		  "'}'");
	CHECK_STR(bad("{\n\"a\": [1,\n"),
		  "x.json: not JSON: unexpected end of input at line 2, "
		  "column 9");
	/* what cJSON reads but RFC 8259 (and Python's json) refuses */
	CHECK_STR(bad("{\"a\": 08}"), "x.json: not JSON: malformed number at "
				     "line 1, column 7, near '08}'");
	CHECK_STR(bad("{\"a\": [1,\n -01]}"),
		  "x.json: not JSON: malformed number at line 2, column 2, "
		  "near '-01]}'");
	CHECK_STR(bad("{\"a\": 8.}"), "x.json: not JSON: malformed number at "
				     "line 1, column 7, near '8.}'");
	CHECK_STR(bad("{\"a\": 1.5e+}"), "x.json: not JSON: malformed number "
					"at line 1, column 7, near '1.5e+}'");
	CHECK_STR(bad("{\"a\": 1.2.3}"), "x.json: not JSON: malformed number "
					"at line 1, column 7, near '1.2.3}'");
	CHECK_STR(bad("{\"a\": \"x\ty\"}"),
		  "x.json: not JSON: a control character in a string at line "
		  "1, column 9, near '?y\"}'");
	CHECK_STR(bad("{\"a\": \"\\u00g9\"}"),
		  "x.json: not JSON: a bad \\u escape at line 1, column 8, "
		  "near '\\u00g9\"}'");
	CHECK_STR(bad("{\"a\": \"\\x41\"}"),
		  "x.json: not JSON: a bad escape at line 1, column 8, near "
		  "'\\x41\"}'");
	CHECK_STR(bad("{\"a\": \"\xc3\"}"),
		  "x.json: not JSON: bytes that are not UTF-8 at line 1, "
		  "column 8, near '?\"}'");
	CHECK_STR(bad("{\"a\": \"\xed\xa0\x80\"}"), /* a surrogate */
		  "x.json: not JSON: bytes that are not UTF-8 at line 1, "
		  "column 8, near '???\"}'");
	CHECK_STR(bad("{\"a\": \"\xc0\xaf\"}"), /* overlong '/' */
		  "x.json: not JSON: bytes that are not UTF-8 at line 1, "
		  "column 8, near '??\"}'");
	{ /* a NUL inside a string, where cJSON would end it */
		static const char nul[] = "{\"a\": \"x\0y\"}";
		char e2[KV_ERRLEN];
		struct kv_model *m2 = NULL;
		CHECK(kv_model_parse(nul, sizeof nul - 1, "x.json", &m2, e2) ==
		      KV_EINVAL);
		CHECK_STR(e2, "x.json: not JSON: a control character in a "
			      "string at line 1, column 9");
	}
	/* a byte-order mark, which Python's json refuses; a NUL escaped,
	 * which would end a C string where the name goes on */
	CHECK_STR(bad("\xEF\xBB\xBF{\"a\": 1}"),
		  "x.json: not JSON: a UTF-8 byte-order mark, which JSON does "
		  "not begin with at line 1, column 1, near '???{\"a\": 1}'");
	CHECK_STR(bad("{\"a\": \"x\\u0000y\"}"),
		  "x.json: not JSON: a NUL (\\u0000) in a string at line 1, "
		  "column 9, near '\\u0000y\"}'");
	CHECK_STR(bad("{\"a\\u0000\": 1}"),
		  "x.json: not JSON: a NUL (\\u0000) in a string at line 1, "
		  "column 4, near '\\u0000\": 1}'");
	/* an earlier syntax error is the one named */
	CHECK_STR(bad("{\"a\" 1, \"b\": 08}"),
		  "x.json: not JSON: syntax error at line 1, column 6, near "
		  "'1, \"b\": 08}'");
	/* and what RFC 8259 writes still reads */
	CHECK_STR(bad("{\"num_hidden_layers\":2,\"hidden_size\":64,"
		      "\"num_attention_heads\":4,\"x\":[-0,0.5e-3,1E+2,-7.25,"
		      "\"\\u00e9\\/\\\"\\b\\f\\n\\r\\t\",\"caf\xc3\xa9 \xe2\x82\xac "
		      "\xf0\x9f\x98\x80\"]}"),
		  "");
	CHECK_STR(bad("{\"model_type\":\"llava\",\"text_config\":\"llama\"}"),
		  "x.json: text_config: must be an object (the text model's "
		  "config), got \"llama\"");
	CHECK_STR(bad("{\"llm_config\":[1],\"num_hidden_layers\":4}"),
		  "x.json: llm_config: must be an object (the text model's "
		  "config), got an array");
	CHECK_STR(bad("{\"text_config\":null,\"num_hidden_layers\":4,"
		      "\"hidden_size\":64,\"num_attention_heads\":4}"),
		  "");
	CHECK_STR(bad("{\"text_config\":{\"num_hidden_layers\":0,"
		      "\"hidden_size\":64,\"num_attention_heads\":4}}"),
		  "x.json: text_config.num_hidden_layers: must be at least 1, "
		  "got 0");
	CHECK_STR(bad("{\"model_type\":3,\"num_hidden_layers\":1}"),
		  "x.json: model_type: must be a string, got 3");
	CHECK_STR(bad("{\"model_type\":\"mistral\",\"num_hidden_layers\":1,"
		      "\"hidden_size\":64,\"num_attention_heads\":4,"
		      "\"sliding_window\":\"4k\"}"),
		  "x.json: sliding_window: must be a number, got \"4k\"");
	/* files */
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	CHECK(kv_model_load("tests/bad/no-such.json", &m, err) == KV_EIO);
	CHECK_STR(err, "tests/bad/no-such.json: No such file or directory");
	CHECK(kv_model_load("tests/bad", &m, err) == KV_EIO);
	CHECK_STR(err, "tests/bad: Is a directory");
	CHECK(kv_model_load("tests/bad/empty.json", &m, err) == KV_EINVAL);
	CHECK_STR(err, "tests/bad/empty.json: empty, not JSON");
	CHECK(m == NULL);
	kv_model_free(NULL);
}

/* One config per error branch of the reader: the message names the field
 * and the value. BASE is a valid Llama shape to add one wrong field to. */
#define BASE "\"num_hidden_layers\":4,\"hidden_size\":64,\"num_attention_heads\":4"
static void test_error_branches(void)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{"{" BASE ",\"rms_norm_eps\":-1}",
		 "rms_norm_eps: must be a non-negative number, got -1"},
		{"{" BASE ",\"rope_theta\":{}}",
		 "rope_theta: must be a non-negative number, got an object"},
		{"{" BASE ",\"tie_word_embeddings\":null,\"head_dim\":null}", ""},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":2,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4}",
		 "num_kv_heads: missing"},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":2,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4,"
		 "\"num_kv_heads\":\"2\"}",
		 "num_kv_heads: must be a list of numbers, got \"2\""},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":2,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4,"
		 "\"num_kv_heads\":[2,-1]}",
		 "num_kv_heads[1]: must not be negative, got -1"},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":2,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4,"
		 "\"num_kv_heads\":[2,3]}",
		 "num_kv_heads[1]: must divide num_query_heads[1] (4), got 3"},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":2,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4,"
		 "\"num_kv_heads\":2,\"ffn_multipliers\":[1]}",
		 "ffn_multipliers: must list one value per layer (2), got 1"},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":2,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4,"
		 "\"num_kv_heads\":2,\"ffn_multipliers\":[1,\"x\"]}",
		 "ffn_multipliers: must be positive numbers, got \"x\""},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":2,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4,"
		 "\"num_kv_heads\":2,\"ffn_dim_divisor\":0}",
		 "ffn_dim_divisor: must be at least 1, got 0"},
		{"{" BASE ",\"layer_types\":\"full\"}",
		 "layer_types: must be a list of layer kinds, got \"full\""},
		{"{" BASE ",\"layer_types\":[1,2,3,4]}",
		 "layer_types[0]: unknown layer kind, got 1"},
		{"{\"model_type\":\"falcon\"," BASE ",\"multi_query\":1}",
		 "multi_query: must be true or false, got 1"},
		{"{\"model_type\":\"falcon\"," BASE
		 ",\"new_decoder_architecture\":true,\"num_kv_heads\":3}",
		 "num_kv_heads: must divide num_attention_heads (4), got 3"},
		{"{\"model_type\":\"gpt_bigcode\"," BASE ",\"multi_query\":0}",
		 "multi_query: must be true or false, got 0"},
		{"{\"model_type\":\"chatglm\"," BASE
		 ",\"multi_query_attention\":\"yes\"}",
		 "multi_query_attention: must be true or false"},
		{"{" BASE ",\"head_dim\":\"16\"}",
		 "head_dim: must be a number, got \"16\""},
		{"{" BASE ",\"kv_channels\":0}",
		 "kv_channels: must be at least 1, got 0"},
		{"{\"model_type\":\"jamba\"," BASE ",\"attn_layer_period\":0}",
		 "attn_layer_period: must be at least 1, got 0"},
		{"{\"model_type\":\"jamba\"," BASE ",\"sliding_window\":8,"
		 "\"attn_layer_period\":2,\"attn_layer_offset\":1}", ""},
		{"{\"model_type\":\"jamba\"," BASE ",\"mamba_d_state\":0}",
		 "mamba_d_state: must be at least 1, got 0"},
		{"{\"model_type\":\"jamba\"," BASE ",\"mamba_dt_rank\":-2}",
		 "mamba_dt_rank: must not be negative, got -2"},
		{"{\"model_type\":\"jamba\"," BASE ",\"mamba_dt_rank\":8}", ""},
		{"{\"model_type\":\"jamba\"," BASE
		 ",\"expert_layer_period\":0}",
		 "expert_layer_period: must be at least 1, got 0"},
		{"{\"model_type\":\"llama4_text\"," BASE
		 ",\"no_rope_layers\":[1,2,1,1]}",
		 "no_rope_layers[1]: absurd value, at most 1, got 2"},
		{"{\"model_type\":\"llama4_text\"," BASE
		 ",\"no_rope_layer_interval\":0}",
		 "no_rope_layer_interval: must be at least 1, got 0"},
		{"{\"model_type\":\"llama4_text\"," BASE
		 ",\"attention_chunk_size\":0}",
		 "attention_chunk_size: must be at least 1, got 0"},
		{"{\"model_type\":\"llama4_text\"," BASE
		 ",\"moe_layers\":[0,9]}",
		 "moe_layers: absurd value, at most 3, got 9"},
		{"{\"model_type\":\"llama4_text\"," BASE
		 ",\"moe_layers\":null,\"interleave_moe_layer_step\":2}", ""},
		{"{\"model_type\":\"qwen2_moe\"," BASE ",\"mlp_only_layers\":[7]}",
		 "mlp_only_layers: absurd value, at most 3, got 7"},
		{"{\"model_type\":\"qwen2_moe\"," BASE
		 ",\"shared_expert_intermediate_size\":-1}",
		 "shared_expert_intermediate_size: must not be negative"},
		{"{\"model_type\":\"qwen2_moe\"," BASE ",\"decoder_sparse_step\":0}",
		 "decoder_sparse_step: must be at least 1, got 0"},
		{"{" BASE ",\"num_local_experts\":4,\"num_experts_per_tok\":5}",
		 "num_experts_per_tok: absurd value, at most 4, got 5"},
		{"{" BASE ",\"num_local_experts\":4,"
		 "\"moe_intermediate_size\":0}",
		 "moe_intermediate_size: must be at least 1, got 0"},
		{"{\"model_type\":\"deepseek_v3\"," BASE ",\"kv_lora_rank\":0}",
		 "kv_lora_rank: must be at least 1, got 0"},
		{"{\"model_type\":\"deepseek_v3\"," BASE ",\"q_lora_rank\":1.5}",
		 "q_lora_rank: must be a whole number, got 1.5"},
		{"{\"model_type\":\"deepseek_v3\"," BASE
		 ",\"num_nextn_predict_layers\":-1}",
		 "num_nextn_predict_layers: must not be negative"},
		{"{\"model_type\":\"deepseek_v3\"," BASE
		 ",\"n_routed_experts\":8,\"n_shared_experts\":\"1\"}",
		 "n_shared_experts: must be a number"},
		{"{\"model_type\":\"deepseek_v3\"," BASE
		 ",\"n_routed_experts\":8,\"first_k_dense_replace\":-1}",
		 "first_k_dense_replace: must not be negative"},
		{"{\"model_type\":\"deepseek_v3\"," BASE
		 ",\"n_routed_experts\":8,\"moe_layer_freq\":0}",
		 "moe_layer_freq: must be at least 1, got 0"},
		{"{" BASE ",\"vocab_size\":0}",
		 "vocab_size: must be at least 1, got 0"},
		{"{" BASE ",\"max_position_embeddings\":1e13}",
		 "max_position_embeddings: absurd value"},
		{"{" BASE ",\"intermediate_size\":false}",
		 "intermediate_size: must be a number, got false"},
		{"{\"model_type\":\"falcon\"," BASE ",\"bias\":\"no\"}",
		 "bias: must be true or false"},
		{"{" BASE ",\"attention_bias\":[]}",
		 "attention_bias: must be true or false, got an array"},
		{"{" BASE ",\"mlp_bias\":null}", ""},
		{"{" BASE ",\"sliding_window\":8,\"use_sliding_window\":\"true\"}",
		 "use_sliding_window: must be true or false"},
		{"{" BASE ",\"use_sliding_window\":true,\"sliding_window\":8,"
		 "\"max_window_layers\":-1}",
		 "max_window_layers: must not be negative"},
		{"{" BASE ",\"sliding_window\":8,\"sliding_window_pattern\":0}",
		 "sliding_window_pattern: must be at least 1, got 0"},
		{"{\"model_type\":\"gemma\"," BASE "}", ""},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":1,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4,"
		 "\"num_kv_heads\":2,\"ffn_multipliers\":0.01}", ""},
		{"{" BASE ",\"model_type\":null}", ""},
		{"{" BASE ",\"hybrid_override_pattern\":7}",
		 "hybrid_override_pattern: must be a string, got 7"},
		{"{" BASE ",\"hybrid_override_pattern\":\"M*M\"}",
		 "hybrid_override_pattern: must have one character per layer "
		 "(4), got 3"},
		{"{" BASE ",\"attn_layer_indices\":[1,4]}",
		 "attn_layer_indices: absurd value, at most 3, got 4"},
		{"{" BASE ",\"attn_type_list\":[1,0,2,1]}",
		 "attn_type_list[2]: absurd value, at most 1, got 2"},
		{"{" BASE ",\"sliding_window\":8,"
		 "\"sliding_window_pattern\":\"LLX\"}",
		 "sliding_window_pattern: a pattern of L and G, got \"LLX\""},
		{"{\"model_type\":\"dbrx\"," BASE
		 ",\"attn_config\":{\"kv_n_heads\":3}}",
		 "attn_config.kv_n_heads: must divide num_attention_heads (4), "
		 "got 3"},
		{"{\"model_type\":\"dbrx\"," BASE
		 ",\"attn_config\":{\"kv_n_heads\":\"8\"}}",
		 "attn_config.kv_n_heads: must be a number, got \"8\""},
		{"{" BASE ",\"num_kv_shared_layers\":5}",
		 "num_kv_shared_layers: must leave a layer whose K and V the "
		 "others share (of 4), got 5"},
		{"{" BASE ",\"num_kv_shared_layers\":4}",
		 "num_kv_shared_layers: must leave a layer whose K and V the "
		 "others share (of 4), got 4"},
		{"{" BASE ",\"cross_attention_layers\":[0,9]}",
		 "cross_attention_layers: absurd value, at most 3, got 9"},
		{"{" BASE ",\"full_attention_interval\":0}",
		 "full_attention_interval: must be at least 1, got 0"},
		{"{\"model_type\":\"falcon\"," BASE
		 ",\"new_decoder_architecture\":true,\"num_kv_heads\":0}",
		 "num_kv_heads: must be at least 1, got 0"},
		{"{" BASE ",\"num_local_experts\":-8}",
		 "num_local_experts: must not be negative, got -8"},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":0}",
		 "num_transformer_layers: must be at least 1, got 0"},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":2,"
		 "\"model_dim\":64}",
		 "head_dim: missing"},
		{"{\"model_type\":\"openelm\",\"num_transformer_layers\":1,"
		 "\"model_dim\":64,\"head_dim\":16,\"num_query_heads\":4,"
		 "\"num_kv_heads\":2,\"rope_freq_constant\":\"big\"}",
		 "rope_freq_constant: must be a non-negative number"},
		{"{" BASE ",\"layer_types\":[\"chunked_attention\","
		 "\"full_attention\",\"full_attention\",\"full_attention\"]}",
		 "attention_chunk_size: missing"},
		{"{" BASE ",\"layer_types\":[\"chunked_attention\","
		 "\"full_attention\",\"full_attention\",\"full_attention\"],"
		 "\"attention_chunk_size\":16}", ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = bad(cases[i].json);
		if (!cases[i].msg[0])
			CHECK_STR(got, "");
		else
			CHECK_HAS(got, cases[i].msg);
	}
	CHECK_STR(kv_attn_name(KV_ATTN_CHUNKED), "chunked");
	CHECK_STR(kv_attn_name(KV_ATTN_MLA), "mla");
	CHECK_STR(kv_attn_name((enum kv_attn)99), "?");
	CHECK_STR(kv_strerror(KV_ERANGE), "result does not fit in 64 bits");
	CHECK_STR(kv_strerror(KV_EUNSUP), "not supported");
	CHECK_STR(kv_strerror(12345), "unknown error");
	CHECK_STR(kv_strerror(KV_OK), "success");
	CHECK_STR(kv_strerror(KV_EINVAL), "invalid input");
	CHECK_STR(kv_strerror(KV_ENOMEM), "out of memory");
	CHECK_STR(kv_strerror(KV_EIO), "input/output error");
}

/* The other hybrids' layer lists, and the kinds they give. */
static void test_hybrid_lists(void)
{
	static const struct {
		const char *json;
		const char *kinds; /* F full, S sliding, N none */
	} cases[] = {
		{"{" BASE ",\"hybrid_override_pattern\":\"M-*M\"}", "NNFN"},
		{"{" BASE ",\"attn_layer_indices\":[1,3]}", "NFNF"},
		{"{" BASE ",\"attn_type_list\":[0,1,1,0]}", "NFFN"},
		{"{" BASE ",\"full_attention_interval\":2}", "NFNF"},
		{"{\"model_type\":\"qwen3_next\"," BASE "}", "NNNF"},
		{"{" BASE ",\"sliding_window\":8,"
		 "\"sliding_window_pattern\":\"LLLG\"}", "SSSF"},
		{"{" BASE ",\"num_kv_shared_layers\":2}", "FFNN"},
		{"{" BASE ",\"cross_attention_layers\":[1]}", "FNFF"},
		{"{" BASE ",\"use_cla\":true,\"cla_share_factor\":2}", "FNFN"},
		{"{" BASE ",\"use_cla\":false,\"cla_share_factor\":2}", "FFFF"},
		{"{\"model_type\":\"RefinedWeb\",\"n_layer\":4,"
		 "\"hidden_size\":64,\"n_head\":4,\"n_head_kv\":2}", "FFFF"},
		/* Kimi Linear counts its layers from 1 */
		{"{" BASE ",\"linear_attn_config\":{\"full_attn_layers\":[2,4],"
		 "\"kda_layers\":[1,3]}}", "NFNF"},
		{"{" BASE ",\"linear_attn_config\":{\"kda_layers\":[1,2,4]}}",
		 "NNFN"},
		{"{\"model_type\":\"zamba2\"," BASE ",\"layers_block_type\":"
		 "[\"mamba\",\"hybrid\",\"mamba\",\"hybrid\"]}", "NFNF"},
		{"{\"model_type\":\"lfm2\"," BASE ",\"full_attn_idxs\":[1,3]}",
		 "NFNF"},
		/* Ring linear: every layer_group_size-th layer attends */
		{"{\"model_type\":\"bailing_moe_linear\"," BASE
		 ",\"layer_group_size\":2}", "NFNF"},
		/* Step 3.5's list goes on over its prediction layers */
		{"{" BASE ",\"num_nextn_predict_layers\":1,\"sliding_window\":8,"
		 "\"layer_types\":[\"full_attention\",\"sliding_attention\","
		 "\"full_attention\",\"sliding_attention\",\"full\"]}",
		 "FSFS"},
		/* every n-th layer full as their classes make layer_types
		 * (EXAONE 4's and OLMo 3's window 4096 by default) */
		{"{\"model_type\":\"exaone4\"," BASE "}", "SSSF"},
		{"{\"model_type\":\"exaone4\"," BASE
		 ",\"sliding_window_pattern\":2}", "SFSF"},
		{"{\"model_type\":\"olmo3\"," BASE "}", "SSSF"},
		{"{\"model_type\":\"afmoe\"," BASE ",\"sliding_window\":8,"
		 "\"global_attn_every_n_layers\":2}", "SFSF"},
		{"{\"model_type\":\"afmoe\"," BASE "}", "FFFF"},
		/* GPT-Neo's kinds, listed or as [kinds, times] pairs */
		{"{\"model_type\":\"gpt_neo\"," BASE ",\"attention_layers\":"
		 "[\"global\",\"local\",\"local\",\"global\"]}", "FSSF"},
		{"{\"model_type\":\"gpt_neo\"," BASE ",\"attention_types\":"
		 "[[[\"global\",\"local\"],1],[[\"local\"],2]]}", "FSSS"},
		{"{\"model_type\":\"gpt_neo\"," BASE "}", "FSFS"},
		/* Zamba without the list: layer 2, then every period-th
		 * from the offset past it */
		{"{\"model_type\":\"zamba\"," BASE "}", "NNFN"},
		{"{\"model_type\":\"zamba\"," BASE ",\"attn_layer_period\":2,"
		 "\"attn_layer_offset\":0}", "NNFF"},
		{"{\"model_type\":\"recurrent_gemma\"," BASE "}", "NNSN"},
		{"{\"model_type\":\"recurrent_gemma\"," BASE
		 ",\"_block_types\":[\"attention\",\"recurrent\"]}", "SNSN"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kv_model *m = NULL;
		char err[KV_ERRLEN], got[8] = "";
		const char *j = cases[i].json;
		if (kv_model_parse(j, strlen(j), "x", &m, err)) {
			CHECK_STR(err, "");
			continue;
		}
		for (uint32_t l = 0; l < m->n_layers && l < 7; l++)
			got[l] = m->layers[l].attn == KV_ATTN_NONE    ? 'N'
				 : m->layers[l].attn == KV_ATTN_SLIDING ? 'S'
									 : 'F';
		CHECK_STR(got, cases[i].kinds);
		if (!strncmp(j, "{\"model_type\":\"RefinedWeb\"", 27))
			CHECK_U64(m->n_kv_heads, 2);
		kv_model_free(m);
	}
}

/* The model a config string builds, or NULL (the message checked ""). */
static struct kv_model *parse(const char *json)
{
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	if (kv_model_parse(json, strlen(json), "x.json", &m, err)) {
		CHECK_STR(err, "");
		return NULL;
	}
	return m;
}

/* Families whose layers, heads or counts follow rules of their own, each
 * against its reference implementation, with hand-worked figures. */
static void test_families(void)
{
	struct kv_model *m;
	/* Kimi Linear: MLA on the full_attn_layers only, 32 + 8 a token */
	if ((m = parse("{\"model_type\":\"kimi_linear\"," BASE
		       ",\"kv_lora_rank\":32,\"qk_rope_head_dim\":8,"
		       "\"linear_attn_config\":{\"full_attn_layers\":[4]}}"))) {
		CHECK_U64(count(m, KV_ATTN_MLA), 1);
		CHECK(m->layers[3].attn == KV_ATTN_MLA);
		CHECK_U64(m->layers[3].head_dim_k, 40);
		kv_model_free(m);
	}
	/* DeepSeek-OCR's deepseek_v2: use_mla false, plain heads of 64 / 4 */
	if ((m = parse("{\"model_type\":\"deepseek_v2\"," BASE
		       ",\"num_key_value_heads\":2,\"use_mla\":false,"
		       "\"kv_lora_rank\":null,\"qk_rope_head_dim\":0}"))) {
		CHECK_U64(count(m, KV_ATTN_FULL), 4);
		CHECK_U64(m->layers[0].kv_heads, 2);
		CHECK_U64(m->layers[0].head_dim_k, 16);
		CHECK_U64(m->layers[0].head_dim_v, 16);
		kv_model_free(m);
	}
	if ((m = parse("{\"model_type\":\"deepseek_v3\"," BASE
		       ",\"kv_lora_rank\":null}"))) {
		CHECK_U64(count(m, KV_ATTN_MLA), 0);
		kv_model_free(m);
	}
	/* GPT-Neo: local layers keep window_size (256) tokens; its
	 * attention_types checked */
	if ((m = parse("{\"model_type\":\"gpt_neo\"," BASE
		       ",\"attention_layers\":[\"global\",\"local\","
		       "\"global\",\"local\"]}"))) {
		CHECK_U64(m->layers[1].window, 256);
		CHECK_U64(m->layers[0].window, 0);
		kv_model_free(m);
	}
	static const struct {
		const char *types, *err;
	} neo[] = {
		{"[[[\"global\"],3]]", "attention_types: must give one kind "
		 "per layer (4), got 3"},
		{"[[[\"global\"],9000]]", "attention_types: must give one "
		 "kind per layer (4), got 5"},
		{"[[[\"lokal\"],4]]", "attention_types[0]: must be [[kinds], "
		 "times] of global and local layers, got an array"},
		{"[[[\"global\"],4],[\"local\",1]]", "attention_types[1]: "
		 "must be [[kinds], times] of global and local layers, got an "
		 "array"},
		{"[[[\"global\"],1.5]]", "attention_types[0]: must be "
		 "[[kinds], times] of global and local layers, got an array"},
		{"\"global\"", "attention_types: must be a list of [kinds, "
		 "times], got \"global\""},
	};
	for (size_t i = 0; i < sizeof neo / sizeof neo[0]; i++) {
		char j[256], want[160];
		snprintf(j, sizeof j,
			 "{\"model_type\":\"gpt_neo\"," BASE
			 ",\"attention_types\":%s}",
			 neo[i].types);
		snprintf(want, sizeof want, "x.json: %s", neo[i].err);
		CHECK_STR(bad(j), want);
	}
	CHECK_STR(bad("{" BASE ",\"layer_types\":[\"full\",\"full\","
		      "\"full\",\"full\",\"full\"]}"),
		  "x.json: layer_types: must list one kind per layer (4), got "
		  "5");
	CHECK_STR(bad("{" BASE ",\"layer_types\":[]}"),
		  "x.json: layer_types: must list one kind per layer (4), got "
		  "0");
	/* MiMo-V2-Flash: hybrid_layer_pattern's sliding layers have their
	 * own K/V heads; moe_layer_freq as a list */
	if ((m = parse("{\"model_type\":\"mimo_v2_flash\"," BASE
		       ",\"num_key_value_heads\":1,\"head_dim\":24,"
		       "\"v_head_dim\":8,\"swa_num_key_value_heads\":2,"
		       "\"swa_v_head_dim\":4,\"sliding_window\":16,"
		       "\"hybrid_layer_pattern\":[0,1,1,0],"
		       "\"n_routed_experts\":4,\"num_experts_per_tok\":2,"
		       "\"moe_layer_freq\":[0,1,1,1]}"))) {
		CHECK(m->layers[0].attn == KV_ATTN_FULL);
		CHECK_U64(m->layers[0].kv_heads, 1);
		CHECK_U64(m->layers[0].head_dim_k, 24);
		CHECK_U64(m->layers[0].head_dim_v, 8);
		CHECK(m->layers[1].attn == KV_ATTN_SLIDING);
		CHECK_U64(m->layers[1].kv_heads, 2);
		CHECK_U64(m->layers[1].head_dim_k, 24);
		CHECK_U64(m->layers[1].head_dim_v, 4);
		CHECK_U64(m->layers[1].window, 16);
		CHECK(m->layers[0].mlp == KV_MLP_DENSE);
		CHECK(m->layers[3].mlp == KV_MLP_MOE);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"mimo_v2_flash\"," BASE
		      ",\"swa_num_key_value_heads\":3}"),
		  "x.json: swa_num_key_value_heads: must divide "
		  "num_attention_heads (4), got 3");
	CHECK_STR(bad("{\"model_type\":\"mimo_v2_flash\"," BASE
		      ",\"hybrid_layer_pattern\":[0,1,2,0]}"),
		  "x.json: hybrid_layer_pattern[2]: absurd value, at most 1, "
		  "got 2");
	/* JetMoE: a query head per KV head and chosen expert */
	if ((m = parse("{\"model_type\":\"jetmoe\",\"num_hidden_layers\":2,"
		       "\"hidden_size\":64,\"num_key_value_heads\":2,"
		       "\"kv_channels\":16,\"num_local_experts\":4,"
		       "\"num_experts_per_tok\":3}"))) {
		CHECK_U64(m->n_heads, 6);
		CHECK_U64(m->layers[0].kv_heads, 2);
		CHECK_U64(m->layers[0].head_dim_k, 16);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"jetmoe\",\"num_hidden_layers\":2,"
		      "\"hidden_size\":64,\"num_key_value_heads\":256,"
		      "\"num_experts_per_tok\":512}"),
		  "x.json: num_key_value_heads: times num_experts_per_tok must "
		  "be at most 65536 heads, got 256 x 512");
	/* GLM-4.7-Flash: MLA needs no hidden / heads (64 over 5 heads);
	 * plain heads do */
	if ((m = parse("{\"model_type\":\"glm4_moe_lite\","
		       "\"num_hidden_layers\":2,\"hidden_size\":64,"
		       "\"num_attention_heads\":5,\"kv_lora_rank\":32,"
		       "\"qk_rope_head_dim\":8,\"qk_nope_head_dim\":16}"))) {
		CHECK_U64(count(m, KV_ATTN_MLA), 2);
		CHECK_U64(m->layers[1].head_dim_k, 40);
		CHECK_U64(m->head_dim, 24);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"glm4_moe_lite\","
		      "\"num_hidden_layers\":2,\"hidden_size\":64,"
		      "\"num_attention_heads\":5,\"kv_lora_rank\":null}"),
		  "x.json: head_dim: missing, and hidden size 64 is not a "
		  "multiple of 5 attention heads");
	/* Zamba2: heads of 2 x 64 / 4 = 32, or attention_head_dim */
	if ((m = parse("{\"model_type\":\"zamba2\"," BASE "}"))) {
		CHECK_U64(m->layers[0].head_dim_k, 32);
		kv_model_free(m);
	}
	if ((m = parse("{\"model_type\":\"zamba2\"," BASE
		       ",\"attention_head_dim\":24}"))) {
		CHECK_U64(m->layers[0].head_dim_v, 24);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"zamba2\",\"num_hidden_layers\":2,"
		      "\"hidden_size\":64,\"num_attention_heads\":3}"),
		  "x.json: attention_head_dim: missing, and twice the hidden "
		  "size, 128, is not a multiple of 3 attention heads");
	/* LongCat-Flash: num_layers 3 of two attention blocks each */
	if ((m = parse("{\"model_type\":\"longcat_flash\",\"num_layers\":3,"
		       "\"hidden_size\":64,\"num_attention_heads\":4,"
		       "\"kv_lora_rank\":32}"))) {
		CHECK_U64(m->n_layers, 6);
		CHECK_U64(count(m, KV_ATTN_MLA), 6);
		kv_model_free(m);
	}
	/* RecurrentGemma: attention layers keep attention_window_size */
	if ((m = parse("{\"model_type\":\"recurrent_gemma\"," BASE "}"))) {
		CHECK_U64(m->layers[2].window, 2048);
		kv_model_free(m);
	}
	if ((m = parse("{\"model_type\":\"recurrent_gemma\"," BASE
		       ",\"attention_window_size\":16}"))) {
		CHECK_U64(m->layers[2].window, 16);
		kv_model_free(m);
	}
	/* Nemotron-NAS: per-layer KV heads 4 / n_heads_in_group, none where
	 * no_op or replace_with_linear, a window where window_length; MLP
	 * 2 x 2.625 x 768 / 3 = 1344, up to 1536 (a multiple of 256) */
	if ((m = parse("{\"model_type\":\"nemotron-nas\","
		       "\"num_hidden_layers\":4,\"hidden_size\":768,"
		       "\"num_attention_heads\":4,\"num_key_value_heads\":null,"
		       "\"block_configs\":["
		       "{\"attention\":{\"n_heads_in_group\":2},"
		       "\"ffn\":{\"ffn_mult\":2.625}},"
		       "{\"attention\":{\"no_op\":true},"
		       "\"ffn\":{\"ffn_mult\":1.0}},"
		       "{\"attention\":{\"replace_with_linear\":true},"
		       "\"ffn\":{\"no_op\":true}},"
		       "{\"attention\":{\"n_heads_in_group\":4,"
		       "\"window_length\":16},"
		       "\"ffn\":{\"ffn_mult\":2.625}}]}"))) {
		CHECK(m->layers[0].attn == KV_ATTN_FULL);
		CHECK(m->layers[1].attn == KV_ATTN_NONE);
		CHECK(m->layers[2].attn == KV_ATTN_NONE);
		CHECK(m->layers[3].attn == KV_ATTN_SLIDING);
		CHECK_U64(m->layers[0].kv_heads, 2);
		CHECK_U64(m->layers[3].kv_heads, 1);
		CHECK_U64(m->layers[3].window, 16);
		CHECK_U64(m->n_kv_heads, 2);
		CHECK_U64(m->layers[0].ffn_dim, 1536);
		CHECK_U64(m->layers[1].ffn_dim, 512); /* 512 exactly */
		CHECK_U64(m->layers[2].ffn_dim, 0);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"nemotron-nas\"," BASE
		      ",\"block_configs\":[{}]}"),
		  "x.json: block_configs: must list one block per layer (4), "
		  "got an array");
	CHECK_STR(bad("{\"model_type\":\"nemotron-nas\",\"num_hidden_layers\":1,"
		      "\"hidden_size\":64,\"num_attention_heads\":4,"
		      "\"block_configs\":[{\"attention\":"
		      "{\"n_heads_in_group\":3},\"ffn\":{\"ffn_mult\":1}}]}"),
		  "x.json: block_configs[0].attention.n_heads_in_group: must "
		  "divide the 4 attention heads, got 3");
	CHECK_STR(bad("{\"model_type\":\"nemotron-nas\",\"num_hidden_layers\":1,"
		      "\"hidden_size\":64,\"num_attention_heads\":4,"
		      "\"block_configs\":[{\"ffn\":{}}]}"),
		  "x.json: block_configs[0]: must be an object with attention "
		  "and ffn, got an object");
	/* Hunyuan: per-layer lists of one value */
	if ((m = parse("{\"model_type\":\"hunyuan_v1_moe\"," BASE
		       ",\"num_experts\":[4,4,4,4],\"moe_topk\":[2,2,2,2],"
		       "\"moe_intermediate_size\":[96,96,96,96]}"))) {
		CHECK_U64(m->n_experts, 4);
		CHECK_U64(m->n_experts_active, 2);
		CHECK_U64(m->layers[0].ffn_dim, 96);
		kv_model_free(m);
	}
	CHECK_STR(bad("{" BASE ",\"num_experts\":4,\"moe_topk\":[2,1,2,2]}"),
		  "x.json: moe_topk[1]: layers that differ here are not read, "
		  "got 1 after 2");
	/* a wrapper's text_config saved as its difference from the class
	 * (LLaVA 1.5 7B): LlamaConfig's 32 layers, 4096 wide, 32 heads */
	if ((m = parse("{\"model_type\":\"llava\",\"text_config\":"
		       "{\"model_type\":\"llama\",\"vocab_size\":32064}}"))) {
		CHECK_U64(m->n_layers, 32);
		CHECK_U64(m->hidden, 4096);
		CHECK_U64(m->layers[0].kv_heads, 32);
		CHECK_U64(m->layers[0].head_dim_k, 128);
		CHECK_HAS(m->note, "LlamaConfig's defaults taken");
		kv_model_free(m);
	}
	if ((m = parse("{\"text_config\":{\"model_type\":\"mistral\","
		       "\"num_hidden_layers\":2}}"))) {
		CHECK_U64(m->n_layers, 2);
		CHECK_U64(m->layers[0].kv_heads, 8);
		kv_model_free(m);
	}
	if ((m = parse("{\"text_config\":{\"model_type\":\"llama\","
		       "\"hidden_size\":64}}"))) {
		CHECK_STR(m->note, "text_config leaves out fields of the shape: "
				   "LlamaConfig's defaults taken (32 layers, 32 "
				   "heads), as Transformers reads it");
		kv_model_free(m);
	}
	/* PaliGemma 2's text_config leaves out Gemma2Config's 8 heads (of
	 * 256, its head_dim) */
	if ((m = parse("{\"model_type\":\"paligemma\",\"text_config\":"
		       "{\"model_type\":\"gemma2\",\"hidden_size\":2304,"
		       "\"num_hidden_layers\":26,\"num_key_value_heads\":4}}"))) {
		CHECK_U64(m->n_heads, 8);
		CHECK_U64(m->layers[0].kv_heads, 4);
		CHECK_U64(m->layers[0].head_dim_k, 256);
		CHECK_HAS(m->note, "Gemma2Config's defaults taken (8 heads)");
		kv_model_free(m);
	}
	/* a wrapper's own dtype before its text model's (BLIP-2 OPT: f32
	 * at the root, f16 in text_config); the text model's without one */
	static const struct {
		const char *json;
		enum kv_dtype t;
	} wd[] = {
		{"{\"torch_dtype\":\"float32\",\"text_config\":{" BASE
		 ",\"torch_dtype\":\"float16\"}}", KV_DTYPE_F32},
		{"{\"dtype\":\"bfloat16\",\"text_config\":{" BASE
		 ",\"torch_dtype\":\"float16\"}}", KV_DTYPE_BF16},
		{"{\"text_config\":{" BASE ",\"dtype\":\"float16\"}}",
		 KV_DTYPE_F16},
	};
	for (size_t i = 0; i < sizeof wd / sizeof wd[0]; i++)
		if ((m = parse(wd[i].json))) {
			CHECK(m->dtype == wd[i].t);
			kv_model_free(m);
		}
	CHECK_STR(bad("{\"torch_dtype\":\"int4\",\"text_config\":{" BASE
		      ",\"torch_dtype\":\"float16\"}}"),
		  "x.json: torch_dtype: unknown dtype, expected float32, "
		  "float16 or bfloat16, got \"int4\"");
	/* Omni models: the thinker's text model, under thinker_config */
	if ((m = parse("{\"model_type\":\"qwen2_5_omni\",\"talker_config\":"
		       "{\"num_hidden_layers\":9},\"thinker_config\":"
		       "{\"text_config\":{" BASE ",\"num_key_value_heads\":2,"
		       "\"sliding_window\":8,\"use_sliding_window\":false}}}"))) {
		CHECK_U64(m->n_layers, 4);
		CHECK_U64(m->layers[0].kv_heads, 2);
		CHECK_U64(count(m, KV_ATTN_FULL), 4);
		kv_model_free(m);
	}
	/* Step3: num_attention_groups KV heads */
	if ((m = parse("{\"model_type\":\"step3_text\"," BASE
		       ",\"num_attention_groups\":1}"))) {
		CHECK_U64(m->layers[0].kv_heads, 1);
		kv_model_free(m);
	}
	/* dots.llm1 gates its window as Qwen does: none without the flag */
	if ((m = parse("{\"model_type\":\"dots1\"," BASE
		       ",\"sliding_window\":8}"))) {
		CHECK_U64(count(m, KV_ATTN_SLIDING), 0);
		kv_model_free(m);
	}
	/* at the top level the shape is never guessed */
	CHECK_STR(bad("{\"model_type\":\"llama\",\"vocab_size\":32064}"),
		  "x.json: num_hidden_layers: missing; a field that defines "
		  "the model's shape is never guessed");
	/* context fields by other names */
	if ((m = parse("{" BASE ",\"max_seq_len\":77}"))) {
		CHECK_U64(m->max_pos, 77);
		kv_model_free(m);
	}
	if ((m = parse("{" BASE ",\"model_max_length\":99}"))) {
		CHECK_U64(m->max_pos, 99);
		kv_model_free(m);
	}
	/* what is not a decoder-only attention model says so */
	CHECK_STR(bad("{\"model_type\":\"t5\",\"num_layers\":2}"),
		  "x.json: model_type \"t5\": an encoder-decoder: only "
		  "decoder-only models are sized here, whose cache grows with "
		  "the tokens they generate");
	CHECK_HAS(bad("{\"model_type\":\"custom\",\"is_encoder_decoder\":true,"
		      BASE "}"), "model_type \"custom\": an encoder-decoder");
	CHECK_STR(bad("{\"model_type\":\"rwkv\",\"num_hidden_layers\":2}"),
		  "x.json: model_type \"rwkv\": a recurrent model with no "
		  "attention layer, so no KV cache: what it keeps per sequence "
		  "is a fixed state, whatever the context");
}

/* Mamba mixers: which layers hold one, and the fields of each family. */
static void test_mamba(void)
{
	struct kv_model *m;
	/* Mamba-1 alone: no KV, every layer a mixer without MLP; dt rank
	 * auto = ceil(64 / 16) */
	if ((m = parse("{\"model_type\":\"mamba\",\"num_hidden_layers\":3,"
		       "\"hidden_size\":64,\"state_size\":8,\"expand\":2,"
		       "\"time_step_rank\":\"auto\"}"))) {
		CHECK_U64(m->ssm_version, 1);
		CHECK_U64(count(m, KV_ATTN_NONE), 3);
		CHECK(m->layers[2].ssm && m->layers[2].mlp == KV_MLP_NONE);
		CHECK_U64(m->ssm_d_inner, 128);
		CHECK_U64(m->ssm_d_state, 8);
		CHECK_U64(m->ssm_d_conv, 4);
		CHECK_U64(m->ssm_dt_rank, 4);
		CHECK(m->tie_embeddings);
		kv_model_free(m);
	}
	/* Mamba2: heads of head_dim 32 over 2 x 64 channels */
	if ((m = parse("{\"model_type\":\"mamba2\",\"num_hidden_layers\":2,"
		       "\"hidden_size\":64,\"num_heads\":4,\"head_dim\":32,"
		       "\"n_groups\":2,\"state_size\":16}"))) {
		CHECK_U64(m->ssm_version, 2);
		CHECK_U64(m->ssm_heads, 4);
		CHECK_U64(m->ssm_groups, 2);
		CHECK_U64(m->ssm_d_inner, 128);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"mamba2\",\"num_hidden_layers\":2,"
		      "\"hidden_size\":64,\"num_heads\":3,\"head_dim\":32}"),
		  "x.json: num_heads: 3 heads of their head size do not make "
		  "the 128 channels of the Mamba mixer");
	/* state-spaces' own configs: ssm_cfg names the layer; the
	 * vocabulary padded to pad_vocab_size_multiple */
	if ((m = parse("{\"d_model\":64,\"n_layer\":2,\"vocab_size\":50277,"
		       "\"pad_vocab_size_multiple\":8,"
		       "\"ssm_cfg\":{\"layer\":\"Mamba2\",\"headdim\":16}}"))) {
		CHECK_U64(m->ssm_version, 2);
		CHECK_U64(m->ssm_heads, 8); /* 128 / 16 */
		CHECK_U64(m->ssm_d_state, 128);
		CHECK_U64(m->vocab, 50280);
		CHECK_STR(m->note, "");
		kv_model_free(m);
	}
	if ((m = parse("{\"d_model\":64,\"n_layer\":2,\"ssm_cfg\":{}}"))) {
		CHECK_U64(m->ssm_version, 1);
		CHECK_U64(m->ssm_d_state, 16);
		kv_model_free(m);
	}
	/* NemotronH: 'M' a mixer alone, '-' an MLP alone, '*' attention
	 * alone; heads x head_dim channels */
	if ((m = parse("{\"model_type\":\"nemotron_h\"," BASE
		       ",\"hybrid_override_pattern\":\"M-*-\","
		       "\"mamba_num_heads\":8,\"mamba_head_dim\":16,"
		       "\"n_groups\":2,\"ssm_state_size\":32}"))) {
		CHECK(m->layers[0].ssm && m->layers[0].mlp == KV_MLP_NONE);
		CHECK(!m->layers[1].ssm && m->layers[1].mlp == KV_MLP_DENSE);
		CHECK(m->layers[2].attn == KV_ATTN_FULL &&
		      m->layers[2].mlp == KV_MLP_NONE);
		CHECK_U64(m->ssm_d_inner, 128);
		CHECK(!m->gated_mlp);
		kv_model_free(m);
	}
	/* Bamba: the layers that do not attend are Mamba-2, with an MLP */
	if ((m = parse("{\"model_type\":\"bamba\"," BASE
		       ",\"attn_layer_indices\":[1],\"mamba_n_heads\":4,"
		       "\"mamba_d_head\":32}"))) {
		CHECK(m->layers[0].ssm && !m->layers[1].ssm);
		CHECK(m->layers[0].mlp == KV_MLP_DENSE);
		CHECK_U64(m->ssm_d_state, 256);
		kv_model_free(m);
	}
	/* RecurrentGemma: the RG-LRU's width splits into the heads' blocks */
	CHECK_STR(bad("{\"model_type\":\"recurrent_gemma\"," BASE
		      ",\"lru_width\":66}"),
		  "x.json: lru_width: must split into the 4 heads' blocks, "
		  "got 66");
	if ((m = parse("{\"model_type\":\"recurrent_gemma\"," BASE "}"))) {
		CHECK(m->layers[0].ssm && !m->layers[2].ssm);
		CHECK_U64(m->ssm_d_inner, 64);
		CHECK_U64(m->ssm_d_conv, 4);
		CHECK(m->tie_embeddings && m->mlp_bias);
		kv_model_free(m);
	}
	/* Falcon-H1: a mixer beside the attention of every layer */
	if ((m = parse("{\"model_type\":\"falcon_h1\"," BASE
		       ",\"mamba_n_heads\":4,\"mamba_d_ssm\":64}"))) {
		CHECK(m->layers[3].ssm && m->layers[3].attn == KV_ATTN_FULL);
		CHECK_U64(m->ssm_d_inner, 64);
		kv_model_free(m);
	}
}

static bool moe_at(const struct kv_model *m, const char *pattern)
{
	for (uint32_t i = 0; i < m->n_layers; i++)
		if ((m->layers[i].mlp == KV_MLP_MOE) != (pattern[i] == 'E'))
			return false;
	return pattern[m->n_layers] == '\0';
}

/* The families whose MLP has no gate, and whose head is tied unless the
 * config says not, as their config classes and modeling files build
 * them. */
static void test_plain_mlp(void)
{
	static const char *const types[] = {"opt", "bloom", "mpt",
					    "starcoder2", "gpt_neox", "gptj"};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		char j[256];
		snprintf(j, sizeof j, "{\"model_type\":\"%s\"," BASE "}",
			 types[i]);
		struct kv_model *m = parse(j);
		if (!m)
			continue;
		CHECK(!m->gated_mlp);
		CHECK(m->tie_embeddings == (i < 4)); /* gpt_neox, gptj untied */
		kv_model_free(m);
	}
	/* their LayerNorms and biases: q, k, v; o; MLP; head; one norm a
	 * block; learned positions (max_position_embeddings 16); a norm of
	 * the embedding; q and k norms */
	static const struct {
		const char *json, *want;
		uint64_t pos;
	} ln[] = {
		{"\"gpt_neox\"", "LQOM", 0},
		{"\"gpt_neox\",\"attention_bias\":false", "LM", 0},
		{"\"gptj\"", "LMHP", 0},
		{"\"codegen\"", "LMHP", 0},
		{"\"gpt_neo\"", "LOM", 16},
		{"\"bloom\"", "LQOME", 0},
		{"\"opt\"", "LQOM", 18},
		{"\"opt\",\"enable_bias\":false", "L", 18},
		{"\"starcoder2\"", "LQOM", 0},
		{"\"starcoder2\",\"use_bias\":false", "L", 0},
		{"\"phi\"", "LQOMHP", 0},
		{"\"phi\",\"qk_layernorm\":true", "LQOMHPK", 0},
		{"\"persimmon\"", "LQOMK", 0},
		{"\"fuyu\"", "LQOMK", 0}, /* Persimmon's text model */
		{"\"qwen3_vl_text\"", "K", 0},
		{"\"nemotron\",\"mlp_bias\":true", "LM", 0},
		{"\"mpt\"", "", 0},
		{"\"llama\"", "", 0},
	};
	for (size_t i = 0; i < sizeof ln / sizeof ln[0]; i++) {
		char j[256], got[16];
		snprintf(j, sizeof j,
			 "{\"model_type\":%s," BASE
			 ",\"max_position_embeddings\":16}",
			 ln[i].json);
		struct kv_model *m = parse(j);
		if (!m)
			continue;
		snprintf(got, sizeof got, "%s%s%s%s%s%s%s%s",
			 m->layernorm ? "L" : "", m->qkv_bias ? "Q" : "",
			 m->o_bias ? "O" : "", m->mlp_bias ? "M" : "",
			 m->head_bias ? "H" : "", m->parallel_block ? "P" : "",
			 m->embed_norm ? "E" : "", m->qk_norm ? "K" : "");
		CHECK_STR(got, ln[i].want);
		CHECK_U64(m->learned_pos, ln[i].pos);
		kv_model_free(m);
	}
	struct kv_model *m = parse("{\"model_type\":\"cohere\"," BASE "}");
	if (m) {
		CHECK(m->gated_mlp && m->tie_embeddings);
		kv_model_free(m);
	}
	/* Phi-3-small's ff_intermediate_size, tied; Molmo's fused gate and
	 * up, twice the width */
	if ((m = parse("{\"model_type\":\"phi3small\"," BASE
		       ",\"ff_intermediate_size\":96}"))) {
		CHECK_U64(m->intermediate, 96);
		CHECK(m->gated_mlp && m->tie_embeddings);
		kv_model_free(m);
	}
	if ((m = parse("{\"model_type\":\"molmo\"," BASE
		       ",\"intermediate_size\":96}"))) {
		CHECK_U64(m->layers[0].ffn_dim, 48);
		kv_model_free(m);
	}
	/* LFM2's MLP: 2/3 of block_ff_dim (else intermediate_size), times
	 * block_ffn_dim_multiplier, up to a multiple of block_multiple_of;
	 * as given without block_auto_adjust_ff_dim */
	static const struct {
		const char *fields;
		uint64_t width;
	} lw[] = {
		{",\"intermediate_size\":96", 256},
		{",\"intermediate_size\":96,\"block_multiple_of\":16", 64},
		{",\"block_ff_dim\":96,\"block_multiple_of\":16,"
		 "\"block_ffn_dim_multiplier\":1.5", 96},
		{",\"intermediate_size\":96,\"block_multiple_of\":16,"
		 "\"block_ffn_dim_multiplier\":null", 64},
		{",\"intermediate_size\":96,\"block_auto_adjust_ff_dim\":false",
		 96},
	};
	for (size_t i = 0; i < sizeof lw / sizeof lw[0]; i++) {
		char j[256];
		snprintf(j, sizeof j, "{\"model_type\":\"lfm2\"," BASE "%s}",
			 lw[i].fields);
		if (!(m = parse(j)))
			continue;
		CHECK_U64(m->layers[0].ffn_dim, lw[i].width);
		CHECK(m->tie_embeddings && m->qk_norm);
		kv_model_free(m);
	}
	if ((m = parse("{\"model_type\":\"lfm2\"," BASE
		       ",\"tie_embedding\":false}"))) {
		CHECK(!m->tie_embeddings);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"lfm2\"," BASE
		      ",\"block_ffn_dim_multiplier\":0}"),
		  "x.json: block_ffn_dim_multiplier: makes an MLP 0 wide, "
		  "got 0");
	/* Qwen (the first): the same fused width, biased q, k and v, and its
	 * dtype from flags, bf16 when none is set */
	static const struct {
		const char *flags;
		enum kv_dtype t;
	} q[] = {
		{"", KV_DTYPE_BF16},
		{",\"bf16\":false,\"fp16\":false,\"fp32\":false", KV_DTYPE_BF16},
		{",\"fp16\":true", KV_DTYPE_F16},
		{",\"fp32\":true", KV_DTYPE_F32},
		{",\"bf16\":true,\"fp32\":true", KV_DTYPE_BF16},
		{",\"fp32\":true,\"torch_dtype\":\"float16\"", KV_DTYPE_F16},
	};
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		char j[256];
		snprintf(j, sizeof j,
			 "{\"model_type\":\"qwen\"," BASE
			 ",\"intermediate_size\":96%s}",
			 q[i].flags);
		if (!(m = parse(j)))
			continue;
		CHECK_U64(m->layers[0].ffn_dim, 48);
		CHECK(m->qkv_bias && !m->o_bias);
		CHECK(m->dtype == q[i].t);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"qwen\"," BASE ",\"bf16\":1}"),
		  "x.json: bf16: must be true or false, got 1");
}

/* Where each MoE family keeps its experts' count, width, shared experts
 * and layers. */
static void test_moe_fields(void)
{
	struct kv_model *m;
	/* Ernie 4.5: moe_k, two shared experts by default, MoE from
	 * moe_layer_start_index, every moe_layer_interval-th */
	if ((m = parse("{\"model_type\":\"ernie4_5_moe\"," BASE
		       ",\"moe_num_experts\":8,\"moe_k\":3,"
		       "\"moe_intermediate_size\":32,"
		       "\"moe_layer_end_index\":-1}"))) {
		CHECK(moe_at(m, "-EEE"));
		CHECK_U64(m->n_experts, 8);
		CHECK_U64(m->n_experts_active, 3);
		CHECK_U64(m->n_shared_experts, 2);
		CHECK_U64(m->shared_ffn_dim, 64);
		kv_model_free(m);
	}
	if ((m = parse("{\"model_type\":\"ernie4_5_moe\"," BASE
		       ",\"moe_layer_interval\":2,\"moe_layer_end_index\":2,"
		       "\"moe_num_shared_experts\":0}"))) {
		CHECK(moe_at(m, "-E--"));
		CHECK_U64(m->n_experts, 64);
		CHECK_U64(m->n_experts_active, 6);
		CHECK_U64(m->shared_ffn_dim, 0);
		kv_model_free(m);
	}
	/* DBRX: ffn_config */
	if ((m = parse("{\"model_type\":\"dbrx\",\"n_layers\":2,"
		       "\"d_model\":64,\"n_heads\":4,"
		       "\"ffn_config\":{\"ffn_hidden_size\":96,"
		       "\"moe_num_experts\":16,\"moe_top_k\":4}}"))) {
		CHECK(moe_at(m, "EE"));
		CHECK_U64(m->n_experts, 16);
		CHECK_U64(m->n_experts_active, 4);
		CHECK_U64(m->layers[1].ffn_dim, 96);
		kv_model_free(m);
	}
	/* Step3: moe_layers_enum, share_expert_dim, share_q_dim */
	if ((m = parse("{\"model_type\":\"step3_text\"," BASE
		       ",\"moe_num_experts\":4,\"moe_top_k\":2,"
		       "\"moe_intermediate_size\":32,\"share_expert_dim\":48,"
		       "\"share_q_dim\":24,\"moe_layers_enum\":\"1,3\"}"))) {
		CHECK(moe_at(m, "-E-E"));
		CHECK_U64(m->shared_ffn_dim, 48);
		CHECK_U64(m->q_lora_rank, 24);
		kv_model_free(m);
	}
	CHECK_STR(bad("{\"model_type\":\"step3_text\"," BASE
		      ",\"moe_num_experts\":4,\"moe_layers_enum\":\"1,4\"}"),
		  "x.json: moe_layers_enum: must list layer indices below 4 "
		  "separated by commas, got \"1,4\"");
	CHECK_STR(bad("{\"model_type\":\"step3_text\"," BASE
		      ",\"moe_num_experts\":4,\"moe_layers_enum\":\"1,\"}"),
		  "x.json: moe_layers_enum: must list layer indices below 4 "
		  "separated by commas, got \"1,\"");
	/* Ling: shared experts of their own width, dense first layers;
	 * Kimi Linear: num_experts_per_token, num_shared_experts */
	if ((m = parse("{\"model_type\":\"bailing_moe\"," BASE
		       ",\"num_experts\":8,\"num_experts_per_tok\":2,"
		       "\"moe_intermediate_size\":32,\"num_shared_experts\":2,"
		       "\"moe_shared_expert_intermediate_size\":48,"
		       "\"first_k_dense_replace\":1}"))) {
		CHECK(moe_at(m, "-EEE"));
		CHECK_U64(m->shared_ffn_dim, 96);
		kv_model_free(m);
	}
	if ((m = test_load("../tests/configs/kimi-linear-48b-a3b"))) {
		CHECK_U64(m->n_experts_active, 8);
		CHECK_U64(m->shared_ffn_dim, 1024);
		CHECK(m->layers[0].mlp == KV_MLP_DENSE &&
		      m->layers[1].mlp == KV_MLP_MOE);
		kv_model_free(m);
	}
	/* Hunyuan's shared expert only under use_mixed_mlp_moe; Arctic's
	 * residual MLP beside its experts */
	if ((m = parse("{\"model_type\":\"hunyuan\"," BASE
		       ",\"intermediate_size\":96,\"num_experts\":4,"
		       "\"moe_topk\":[1,1,1,1],\"num_shared_expert\":[1,1,1,1],"
		       "\"use_mixed_mlp_moe\":true}"))) {
		CHECK_U64(m->shared_ffn_dim, 96);
		CHECK_U64(m->n_experts_active, 1);
		kv_model_free(m);
	}
	if ((m = parse("{\"model_type\":\"hunyuan\"," BASE
		       ",\"num_experts\":4,\"num_shared_expert\":1}"))) {
		CHECK_U64(m->shared_ffn_dim, 0);
		kv_model_free(m);
	}
	if ((m = parse("{\"model_type\":\"arctic\"," BASE
		       ",\"intermediate_size\":80,\"num_local_experts\":8,"
		       "\"parallel_attn_mlp_res\":true}"))) {
		CHECK(moe_at(m, "EEEE"));
		CHECK_U64(m->shared_ffn_dim, 80);
		CHECK_U64(m->layers[0].ffn_dim, 80);
		kv_model_free(m);
	}
	/* LongCat-Flash: each layer's dense MLP, the first of each pair
	 * with the shortcut MoE beside it (its shared expert) */
	if ((m = parse("{\"model_type\":\"longcat_flash\",\"num_layers\":2,"
		       "\"hidden_size\":64,\"num_attention_heads\":4,"
		       "\"ffn_hidden_size\":128,\"expert_ffn_hidden_size\":32,"
		       "\"n_routed_experts\":8,\"moe_topk\":2}"))) {
		CHECK(moe_at(m, "E-E-"));
		CHECK_U64(m->layers[0].ffn_dim, 32);
		CHECK_U64(m->layers[1].ffn_dim, 128);
		CHECK_U64(m->shared_ffn_dim, 128);
		kv_model_free(m);
	}
}

/* Text that parses but means two things, or more than one value, or
 * more nesting than the reader takes. */
/* Numbers written as integers told from those with a fraction or an
 * exponent, in the order of the text, strings with digits skipped. */
static void test_json_whole(void)
{
	static const char j[] = "{\"1.5\": [1, 1.0, 1e0, -1, 9007199254740993,"
				" {\"x\\\"2.0\": 7}, \"8.0\", 0, 2E3, 40]}";
	static const bool want[] = {true, false, false, false, false, true,
				    true, false, true};
	static const uint64_t vals[] = {1, 0, 0, 0, 0, 7, 0, 0, 40};
	char err[KV_ERRLEN];
	cJSON *root = NULL;
	CHECK(kv_json_read(j, sizeof j - 1, "x.json", &root, err) == 0);
	const cJSON *a = root ? root->child : NULL, *it;
	size_t k = 0;
	cJSON_ArrayForEach(it, a)
	{
		uint64_t v = 0;
		if (cJSON_IsString(it))
			continue;
		const cJSON *n = cJSON_IsObject(it) ? it->child : it;
		bool w = kv_json_whole(n, 9007199254740992ULL, &v);
		if (k < sizeof want / sizeof *want) {
			CHECK(w == want[k]);
			if (w)
				CHECK_U64(v, vals[k]);
		}
		k++;
	}
	CHECK_U64(k, sizeof want / sizeof *want);
	uint64_t v;
	CHECK(!kv_json_whole(root, 10, &v)); /* not a number */
	CHECK(!kv_json_whole(a ? a->child : NULL, 0, &v)); /* 1 above 0 */
	cJSON_Delete(root);
}

static void test_json_edges(void)
{
	CHECK_STR(bad("{" BASE "} x"),
		  "x.json: not JSON: more after the end of the value, at line "
		  "1, column 66");
	CHECK_STR(bad("{" BASE "}\n \n"), "");
	{ /* a NUL after the value (a C string's end, written out) is data */
		static const char nul[] = "{" BASE "}\n\0";
		char err[KV_ERRLEN] = "";
		struct kv_model *m = NULL;
		CHECK(kv_model_parse(nul, sizeof nul, "x.json", &m, err) ==
		      KV_EINVAL);
		CHECK(m == NULL);
		CHECK_STR(err, "x.json: not JSON: a NUL byte after the end of "
			       "the value, at line 2, column 1");
		CHECK(kv_model_parse(nul, sizeof nul - 2, "x.json", &m, err) ==
		      0); /* the same text without it */
		kv_model_free(m);
	}
	CHECK_STR(bad("{" BASE ",\"num_hidden_layers\":40}"),
		  "x.json: num_hidden_layers: given twice; Python's json reads "
		  "the last, other readers the first");
	CHECK_STR(bad("{" BASE ",\"text_config\":{\"a\":[{\"b\":1,\"b\":2}]}}"),
		  "x.json: text_config.a.b: given twice; Python's json reads "
		  "the last, other readers the first");
	static char deep[4200];
	size_t k = 0;
	deep[k++] = '{';
	memcpy(deep + k, "\"a\":", 4);
	k += 4;
	for (int i = 0; i < 2000; i++)
		deep[k++] = '[';
	for (int i = 0; i < 2000; i++)
		deep[k++] = ']';
	deep[k++] = '}';
	deep[k] = '\0';
	CHECK_STR(bad(deep),
		  "x.json: arrays and objects nested deeper than the 1000 "
		  "levels the JSON reader takes, at line 1, column 1005");
}

/* A config larger than the first read buffer (64 KiB) loads whole. */
static void test_big_file(void)
{
	char path[] = "/tmp/kv-big-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	FILE *f = fdopen(fd, "w");
	fputs("{\"padding\": \"", f);
	for (int i = 0; i < 300000; i++)
		fputc('x', f);
	fputs("\", \"num_hidden_layers\": 3, \"hidden_size\": 64, "
	      "\"num_attention_heads\": 4}", f);
	fclose(f);
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	CHECK(kv_model_load(path, &m, err) == 0);
	if (m)
		CHECK_U64(m->n_layers, 3);
	kv_model_free(m);
	/* past 64 MiB a file is not a config: refused before it is parsed */
	f = fopen(path, "w");
	if (f) {
		static char spaces[1 << 16];
		memset(spaces, ' ', sizeof spaces);
		fputc('{', f);
		for (int i = 0; i < 1025; i++)
			fwrite(spaces, 1, sizeof spaces, f);
		fputc('}', f);
		fclose(f);
		CHECK(kv_model_load(path, &m, err) == KV_EINVAL);
		CHECK_HAS(err, "larger than 64 MiB; not a config");
		CHECK(m == NULL);
	}
	remove(path);
}

static void test_find(void)
{
	char p[4096];
	setenv("KV_CONFIG_PATH", "/nonexistent:configs", 1);
	CHECK(kv_config_find("gpt2", p, sizeof p) == 0);
	CHECK_STR(p, "configs/gpt2.json");
	CHECK(kv_config_find("gpt2.json", p, sizeof p) == 0);
	CHECK_STR(p, "configs/gpt2.json");
	CHECK(kv_config_find("./x/y.json", p, sizeof p) == 0);
	CHECK_STR(p, "./x/y.json");
	CHECK(kv_config_find("-", p, sizeof p) == 0);
	CHECK(kv_config_find("no-such-model", p, sizeof p) == KV_EIO);
	/* a snapshot folder, with or without its slash */
	CHECK(kv_config_find("tests/ckpt/tiny", p, sizeof p) == 0);
	CHECK_STR(p, "tests/ckpt/tiny/config.json");
	CHECK(kv_config_find("tests/ckpt/tiny/", p, sizeof p) == 0);
	CHECK_STR(p, "tests/ckpt/tiny/config.json");
	CHECK(kv_config_find("tests/bad", p, sizeof p) == KV_EIO);
	/* org/name in a hub cache: refs/main's snapshot, or the only one */
	setenv("HF_HUB_CACHE", "tests/hf-cache", 1);
	CHECK(kv_config_find("meta-llama/Llama-3.1-8B", p, sizeof p) == 0);
	CHECK_STR(p, "tests/hf-cache/models--meta-llama--Llama-3.1-8B/"
		     "snapshots/0e9e39f249a16976918f6564b8830bc894c89659/"
		     "config.json");
	CHECK(kv_config_find("openai/gpt-oss-20b", p, sizeof p) == 0);
	CHECK_HAS(p, "models--openai--gpt-oss-20b/snapshots/6cee5e81");
	CHECK(kv_config_find("nobody/nothing", p, sizeof p) == KV_EIO);
	unsetenv("HF_HUB_CACHE");
	CHECK_STR(kv_config_dir(0), "/nonexistent");
	CHECK_STR(kv_config_dir(1), "configs");
}

/*
 * The family table: each entry's model_type resolves to that entry, known
 * unless T_NOTED, and no type is listed twice; a type not listed is read
 * by its prefix as documented (family.c, FAMILY_PREFIXES); and a type
 * extending an entry's name takes no trait the entry lacks, so the table
 * and the prefix rules say the same (but DeepSeek-MoE, "deepseek", which
 * has no latent while its descendants do).
 */
static void test_family_table(void)
{
	const struct family *e;
	bool known;
	for (size_t i = 0; (e = kv_family_at(i)); i++) {
		struct family f = family_of(e->type, &known);
		CHECK_STR(f.type, e->type);
		CHECK(f.family == e->family);
		/* field by field: a copy need not keep the padding */
		CHECK(f.d.vocab == e->d.vocab && f.d.max_pos == e->d.max_pos &&
		      f.d.window == e->d.window &&
		      f.d.head_dim == e->d.head_dim && f.d.tie == e->d.tie &&
		      f.d.swa_flag == e->d.swa_flag && f.d.ffn == e->d.ffn);
		CHECK_U64(f.traits, e->traits);
		CHECK(f.ops && (!e->ops || f.ops == e->ops));
		CHECK(known == !(e->traits & T_NOTED));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(kv_family_at(j)->type, e->type) != 0);
		char t[96];
		snprintf(t, sizeof t, "%s_unlisted", e->type);
		struct family u = family_of(t, &known);
		unsigned extra = u.traits & ~e->traits;
		if (!strcmp(e->type, "deepseek"))
			extra &= ~(unsigned)T_MLA;
		if (extra)
			fprintf(stderr, "%s: traits %#x not on %s\n", t, extra,
				e->type);
		CHECK(!extra);
	}
	static const struct {
		const char *type;
		bool known;
		enum kv_family family;
		unsigned traits;
		uint64_t vocab;
		bool swa_flag;
	} P[] = {
		{"kimi_k2", true, KV_FAMILY_DEEPSEEK, T_MLA, 129280, false},
		{"deepseek_vl_v2", true, KV_FAMILY_DEEPSEEK, T_MLA, 129280,
		 false},
		{"deepseek_v32", true, KV_FAMILY_DEEPSEEK, T_MLA | T_INDEXER,
		 129280, false},
		{"deepseek", true, KV_FAMILY_DEEPSEEK, 0, 129280, false},
		{"qwen2_5_omni", false, KV_FAMILY_LLAMA, T_QKV_BIAS, 32000,
		 true},
		{"qwen3_omni_moe", false, KV_FAMILY_LLAMA, T_QK_NORM, 32000,
		 true},
		{"qwen2_audio", false, KV_FAMILY_LLAMA, T_QKV_BIAS, 32000,
		 false},
		{"qwen3_vl", false, KV_FAMILY_LLAMA, T_QK_NORM, 32000, false},
		{"lfm2_vl", false, KV_FAMILY_LLAMA, T_QK_NORM, 32000, false},
		{"gemma3_vision", false, KV_FAMILY_LLAMA, T_HEADS_8_4, 32000,
		 false},
		{"gemma3n_vision", false, KV_FAMILY_LLAMA, 0, 32000, false},
		{"zamba3", false, KV_FAMILY_LLAMA, T_ZAMBA | T_BESIDE, 32000,
		 false},
		{"hunyuan_vl", false, KV_FAMILY_LLAMA, T_MIXED, 32000, false},
		{"afmoe", false, KV_FAMILY_LLAMA, T_NOTED, 32000, false},
		{"foo", false, KV_FAMILY_LLAMA, 0, 32000, false},
		{"", false, KV_FAMILY_LLAMA, 0, 32000, false},
	};
	for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
		struct family f = family_of(P[i].type, &known);
		CHECK_STR(f.type, P[i].type);
		CHECK(known == P[i].known);
		CHECK(f.family == P[i].family);
		CHECK_U64(f.traits, P[i].traits);
		CHECK_U64(f.d.vocab, P[i].vocab);
		CHECK(f.d.swa_flag == P[i].swa_flag);
		CHECK(f.ops != NULL);
	}
}

int main(void)
{
	test_shipped();
	test_defaults();
	test_errors();
	test_error_branches();
	test_hybrid_lists();
	test_families();
	test_mamba();
	test_moe_fields();
	test_plain_mlp();
	test_json_edges();
	test_json_whole();
	test_big_file();
	test_find();
	test_family_table();
	return test_done("test_model");
}
