/*
 * test_audio.c - an audio tower's weights, a clip's tokens, the tower's
 * FLOPs and time in a prompt's prefill, and the encoder outputs vLLM
 * holds while it profiles, against counts worked by hand from the
 * published configs (tests/configs/qwen2-audio-7b-instruct.json,
 * voxtral-mini-3b-2507.json) and the models' code (transformers
 * modeling_qwen2_audio.py, commit 01ae98ae; processing_qwen2_audio.py,
 * commit 718881e4; modular_voxtral.py, commit 00aa0f5d; vLLM
 * qwen2_audio.py, commit cd1e8452; voxtral.py, commit 00955cff); and
 * what they do to a row: taken before the KV budget, added to ttft.
 */
#include "kv/audio.h"
#include "kv/fit.h"
#include "kv/params.h"
#include "kv/serve.h"
#include "test.h"
#include "tower_row.h"

#define QWEN2_AUDIO "tests/configs/qwen2-audio-7b-instruct.json"
#define VOXTRAL "tests/configs/voxtral-mini-3b-2507.json"
#define OMNI "tests/configs/qwen2.5-omni-7b.json"

/*
 * Qwen2-Audio's config: its text_config names none of the text model's
 * shape, so Qwen2Config's defaults (transformers configuration_qwen2.py:
 * 32 layers, hidden 4,096, 32 heads, 32 KV heads) with its vocabulary of
 * 156,032. Text parameters: per layer q, k, v 3 (4,096^2 + 4,096) =
 * 50,343,936, o 16,777,216, MLP 3 x 4,096 x 11,008 = 135,266,304, two
 * norms 8,192: 202,395,648, x 32 = 6,476,660,736; embedding and untied
 * head 2 x 156,032 x 4,096 = 1,278,214,144; final norm 4,096:
 * 7,754,878,976. Its audio_config: 32 layers of 1,280, MLP 5,120, 128
 * mel bins, 1,500 positions.
 */
static void qwen2_config(void)
{
	struct kv_model *m = test_load_path(QWEN2_AUDIO);
	struct kv_params p;
	char err[KV_ERRLEN];
	CHECK_U64(m->n_layers, 32);
	CHECK_U64(m->hidden, 4096);
	CHECK_U64(m->n_heads, 32);
	CHECK_U64(m->n_kv_heads, 32);
	CHECK_U64(m->vocab, 156032);
	CHECK(m->audio && m->aud_kind == KV_AUD_QWEN2);
	CHECK_U64(m->aud_layers, 32);
	CHECK_U64(m->aud_hidden, 1280);
	CHECK_U64(m->aud_ffn, 5120);
	CHECK_U64(m->aud_mels, 128);
	CHECK_U64(m->aud_pos, 1500);
	CHECK(kv_model_params(m, &p, err) == 0);
	CHECK_U64(p.total, 7754878976ULL);
	kv_model_free(m);
}

/*
 * The Whisper encoder of 32 layers of h 1,280, f 5,120, 128 mel bins,
 * 1,500 positions. A layer: q, v, o with biases and k without, 4 h^2 +
 * 3 h = 6,557,440; fc1 and fc2 with biases 2 h f + f + h = 13,113,600;
 * two LayerNorms 4 h = 5,120: 19,676,160, x 32 = 629,637,120. conv1 128
 * x 1,280 x 3 + 1,280 = 492,800; conv2 1,280^2 x 3 + 1,280 = 4,916,480;
 * positions 1,500 x 1,280 = 1,920,000; final LayerNorm 2,560: the
 * encoder 636,968,960, whisper-large-v3's (its published 1,543,490,560
 * less its decoder's 906,521,600: 32 layers of 26,236,160, 51,866 x
 * 1,280 token and 448 x 1,280 position embeddings, a LayerNorm).
 * Qwen2-Audio's projector 1,280 x 4,096 + 4,096 = 5,246,976: 642,215,936.
 * Voxtral Mini's adapter 5,120 x 3,072 + 3,072^2 = 25,165,824:
 * 662,134,784; its text model (30 layers of 106,960,896: q and o 2 x
 * 3,072 x 4,096, k and v 2 x 3,072 x 1,024, MLP 3 x 3,072 x 8,192, two
 * norms; untied 131,072 x 3,072 twice; a norm) 4,014,136,320,
 * 4,676,271,104 in all, the hub's 4.68B.
 */
static void params(void)
{
	struct kv_model *q = test_load_path(QWEN2_AUDIO);
	struct kv_model *v = test_load_path(VOXTRAL);
	struct kv_params p;
	char err[KV_ERRLEN];
	CHECK_U64(kv_audio_params(q), 642215936ULL);
	CHECK(v->audio && v->aud_kind == KV_AUD_VOXTRAL);
	CHECK_U64(kv_audio_params(v), 662134784ULL);
	CHECK(kv_model_params(v, &p, err) == 0);
	CHECK_U64(p.total, 4014136320ULL);
	CHECK_U64(p.total + kv_audio_params(v), 4676271104ULL);
	kv_model_free(q);
	kv_model_free(v);
}

/*
 * Qwen2-Audio's tokens: L = ceil(samples / 160) frames, (L - 1) / 2 + 1
 * after conv2, (that - 2) / 2 + 1 after the pool. 30 s: 3,000, 1,500,
 * 750; 10 s: 1,000, 500, 250; 0.5 s: 50, 25, 12; 0.021 s (336 samples):
 * 3, 2, 1; 0.02 s (320 samples): 2, 1, none (refused); past 30 s
 * refused. Always one pass of 1,500 positions, the projector on 750.
 * Voxtral's: whole 30-s chunks of 375 tokens: 10 s and 30 s one,
 * 30.01 s two (750), 600 s twenty (7,500).
 */
static void clips(void)
{
	struct kv_model *q = test_load_path(QWEN2_AUDIO);
	struct kv_model *v = test_load_path(VOXTRAL);
	struct kv_audio_clip c;
	char err[KV_ERRLEN];
	CHECK(kv_audio_clip(q, 30, &c, err) == 0);
	CHECK_U64(c.tokens, 750);
	CHECK_U64(c.chunks, 1);
	CHECK_U64(c.positions, 1500);
	CHECK_U64(c.rows, 750);
	CHECK_U64(kv_audio_tokens(q, 10), 250);
	CHECK_U64(kv_audio_tokens(q, 1), 25);
	CHECK_U64(kv_audio_tokens(q, 0.5), 12);
	CHECK_U64(kv_audio_tokens(q, 0.021), 1);
	CHECK(kv_audio_clip(q, 0.02, &c, err) == KV_EINVAL);
	CHECK_STR(err, "--audio-seconds: 0.02: too short for one audio token "
		       "(at least 0.0200625 s)");
	/* a longer clip: its first 30 s, as the feature extractor keeps */
	CHECK(kv_audio_clip(q, 30.01, &c, err) == 0);
	CHECK_U64(c.tokens, 750);
	CHECK_NEAR(c.kept_s, 30, 0);
	CHECK(kv_audio_clip(q, 10, &c, err) == 0);
	CHECK_NEAR(c.kept_s, 10, 0);
	CHECK_U64(kv_audio_tokens(q, 31), 750);
	CHECK(kv_audio_clip(v, 10, &c, err) == 0);
	CHECK_U64(c.tokens, 375);
	CHECK_U64(c.rows, 375);
	CHECK_U64(kv_audio_tokens(v, 30), 375);
	CHECK_U64(kv_audio_tokens(v, 30.01), 750);
	CHECK(kv_audio_clip(v, 600, &c, err) == 0);
	CHECK_U64(c.chunks, 20);
	CHECK_U64(c.tokens, 7500);
	kv_model_free(q);
	kv_model_free(v);
}

/*
 * FLOPs a pass of n 1,500 positions, h 1,280, f 5,120, 128 mels, 32
 * layers: conv1 2 x 3,000 x 3 x 128 x 1,280 = 2,949,120,000; conv2 2 x
 * 1,500 x 3 x 1,280^2 = 14,745,600,000; a layer's products 2 x 1,500 x
 * (4 h^2 + 2 h f) = 58,982,400,000, x 32 = 1,887,436,800,000;
 * Qwen2-Audio's projector 2 x 750 x 1,280 x 4,096 = 7,864,320,000:
 * 1,912,995,840,000 in products; attention 4 x 1,500^2 x 1,280 =
 * 11,520,000,000 a layer, x 32 = 368,640,000,000. Over tp 2, half.
 * Voxtral's adapter 2 x 375 x (5,120 x 3,072 + 3,072^2) = 18,874,368,000:
 * 1,924,005,888,000 a chunk, x 20 chunks for 600 s.
 */
static void flops(void)
{
	struct kv_model *q = test_load_path(QWEN2_AUDIO);
	struct kv_model *v = test_load_path(VOXTRAL);
	struct kv_audio_clip c;
	struct kv_vision_flops fl;
	char err[KV_ERRLEN];
	CHECK(kv_audio_clip(q, 7, &c, err) == 0);
	kv_audio_flops(q, &c, 1, &fl);
	CHECK_NEAR(fl.linear, 1912995840000.0, 1);
	CHECK_NEAR(fl.attn, 368640000000.0, 1);
	CHECK_U64(fl.rows, 1500);
	CHECK_U64(fl.seq, 1500);
	kv_audio_flops(q, &c, 2, &fl);
	CHECK_NEAR(fl.linear, 956497920000.0, 1);
	CHECK(kv_audio_clip(v, 600, &c, err) == 0);
	kv_audio_flops(v, &c, 1, &fl);
	CHECK_NEAR(fl.linear, 20 * 1924005888000.0, 1);
	CHECK_NEAR(fl.attn, 20 * 368640000000.0, 1);
	CHECK_U64(fl.rows, 30000);
	kv_model_free(q);
	kv_model_free(v);
}

/*
 * vLLM's profile: Qwen2-Audio's items of 750 tokens (its
 * get_mm_max_tokens_per_item: (1,500 - 2) / 2 + 1), one a prompt; 8,192
 * batched: 10 clips, 10 x 750 x 4,096 x 2 = 61,440,000 bytes; 4
 * sequences: 4, 24,576,000; 512 batched (below 750): one, 6,144,000.
 * Voxtral's item max_model_len (32,768) tokens: one, 32,768 x 3,072 x 2
 * = 201,326,592.
 */
static void encoder(void)
{
	struct kv_model *q = test_load_path(QWEN2_AUDIO);
	struct kv_model *v = test_load_path(VOXTRAL);
	uint64_t items, bytes;
	CHECK(kv_audio_encoder(q, KV_DTYPE_BF16, 8192, 1024, 8192, &items,
			       &bytes) == 0);
	CHECK_U64(items, 10);
	CHECK_U64(bytes, 61440000);
	CHECK(kv_audio_encoder(q, KV_DTYPE_BF16, 8192, 4, 8192, &items,
			       &bytes) == 0);
	CHECK_U64(items, 4);
	CHECK_U64(bytes, 24576000);
	CHECK(kv_audio_encoder(q, KV_DTYPE_BF16, 512, 1024, 8192, &items,
			       &bytes) == 0);
	CHECK_U64(items, 1);
	CHECK_U64(bytes, 6144000);
	CHECK(kv_audio_encoder(v, KV_DTYPE_BF16, 8192, 1024, 32768, &items,
			       &bytes) == 0);
	CHECK_U64(items, 1);
	CHECK_U64(bytes, 201326592);
	kv_model_free(q);
	kv_model_free(v);
}

/*
 * On a row: vLLM's free KV is less by the tower's bf16 weights
 * (1,284,431,872) and the encoder outputs (61,440,000 at 8,192 batched
 * tokens): 1,345,871,872 bytes; over 2 ranks the tower is split
 * (642,215,936 each); weights given as bytes hold the tower; the ideal
 * engine profiles nothing.
 */
static void row_effects(void)
{
	struct kv_model *m = test_load_path(QWEN2_AUDIO);
	char err[KV_ERRLEN];
	struct kv_fit f0, f;
	struct kv_fit_in in = row(m, VLLM, 0, 0);
	CHECK(kv_fit_solve(&in, &f0, err) == 0);
	CHECK_U64(f0.audio_weights, 0);
	in.audio_s = 30;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.audio_weights, 1284431872ULL);
	CHECK_U64(f.encoder_items, 10);
	CHECK_U64(f.encoder_bytes, 61440000);
	CHECK_U64(f0.free_kv - f.free_kv, 1345871872ULL);
	in.tp = 2;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.audio_weights, 642215936ULL);
	in.tp = 1;
	in.weights = 16794189824ULL;
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.audio_weights, 0);
	in = row(m, IDEAL, 0, 30);
	CHECK(kv_fit_solve(&in, &f, err) == 0);
	CHECK_U64(f.audio_weights, 1284431872ULL);
	CHECK_U64(f.encoder_bytes, 0);
	kv_model_free(m);
}

/* No tower (a vision-language model's), a tower not modelled
 * (MiniCPM-o's), a clip the model does not take, an engine whose audio
 * is not modelled: refused, naming the model. */
static void refusals(void)
{
	struct kv_model *m =
		test_load_path("tests/configs/qwen2.5-vl-7b-instruct.json");
	char err[KV_ERRLEN];
	struct kv_fit_in in = row(m, VLLM, 1, 10);
	CHECK(kv_audio_refuses(&in, err));
	CHECK_STR(err, "qwen2.5-vl-7b-instruct: --audio-seconds: the model "
		       "has no audio tower (no audio_config)");
	in.audio_s = 0;
	CHECK(!kv_audio_refuses(&in, err));
	kv_model_free(m);
	m = test_parse("{\"architectures\":[\"MiniCPMO\"],"
		       "\"model_type\":\"minicpmo\",\"audio_config\":"
		       "{\"d_model\":1024},\"num_hidden_layers\":2,"
		       "\"hidden_size\":64,\"num_attention_heads\":4}");
	in = row(m, VLLM, 0, 10);
	CHECK(kv_audio_refuses(&in, err));
	CHECK_STR(err, "tiny: --audio-seconds: the audio tower of MiniCPMO "
		       "is not modelled (Qwen2-Audio's, Voxtral's and "
		       "Qwen2.5-Omni's are)");
	CHECK_U64(kv_audio_params(m), 0);
	kv_model_free(m);
	m = test_load_path(QWEN2_AUDIO);
	in = row(m, VLLM, 0, 31); /* served as its first 30 s */
	CHECK(!kv_audio_refuses(&in, err));
	in = row(m, SGLANG, 0, 10);
	CHECK(kv_audio_refuses(&in, err));
	CHECK_STR(err, "qwen2-audio-7b-instruct: --audio-seconds: SGLang's "
		       "audio encoder is not modelled (vLLM's and the ideal "
		       "engine's are)");
	in = row(m, IDEAL, 0, 10);
	CHECK(!kv_audio_refuses(&in, err));
	kv_model_free(m);
}

/*
 * Qwen2-Audio's tower on a clip at the datasheet's rates at half their
 * peak (1,000 TFLOP/s x 0.5, 3,350 GB/s): products 1.912996e12 / 5e14 =
 * 3.825992 ms (its 1,284,431,872 bf16 bytes read in 0.383 ms, shorter),
 * attention 3.6864e11 / 5e14 = 0.73728 ms: 4.563272 ms, the same for any
 * clip (padded to 30 s); one user's ttft grows by it. A burst is refused.
 */
static void encoder_time(void)
{
	struct kv_model *m = test_load_path(QWEN2_AUDIO);
	struct kv_serve s0, s1;
	char err[KV_ERRLEN];
	struct kv_fit_in in = timed_row(m);
	struct kv_serve_in w = tower_work();
	CHECK(kv_serve_solve(&in, &w, &s0, err) == 0);
	CHECK_NEAR(s0.encoder.ms, 0, 0);
	in.audio_s = 5;
	CHECK(kv_serve_solve(&in, &w, &s1, err) == 0);
	CHECK_NEAR(s1.encoder.ms, 4.563272, 1e-5);
	CHECK_NEAR(s1.encoder.flops, 2281635840000.0, 1);
	CHECK_NEAR(s1.ttft_ms - s0.ttft_ms, 4.563272, 1e-5);
	w.arrivals = KV_ARRIVE_BURST;
	CHECK(kv_serve_solve(&in, &w, &s1, err) == KV_EINVAL);
	CHECK_HAS(err, "--arrivals burst with --audio-seconds");
	kv_model_free(m);
}

/*
 * Qwen2.5-Omni 7B's thinker: its text model Qwen2.5 7B's, 7,615,616,512
 * (the published breakdown: thinker.model 7,070,619,136 and lm_head
 * 544,997,376). Its audio tower: Whisper's 32 layers 629,637,120, conv1
 * 492,800, conv2 4,916,480, no stored positions (sinusoidal), ln_post
 * 2,560, proj 1,280 x 3,584 + 3,584 = 4,591,104, audio_bos_eos_token 2 x
 * 3,584 = 7,168: 639,647,232, the published thinker.audio_tower's.
 * Tokens as Qwen2-Audio's; the tower on the clip's frames alone, in
 * windows of 200 frames (n_window 100 positions). 10 s: 1,000 frames,
 * 500 positions in 5 windows, 250 tokens. conv1 2 x 1,000 x 3 x 128 x
 * 1,280 = 983,040,000; conv2 2 x 500 x 3 x 1,280^2 = 4,915,200,000;
 * layers 32 x 2 x 500 x 19,660,800 = 629,145,600,000; proj 2 x 250 x
 * 1,280 x 3,584 = 2,293,760,000: 637,337,600,000 in products; attention
 * 32 x 4 x 1,280 x 5 x 100^2 = 8,192,000,000. 7 s: 700 frames, 350
 * positions, windows of 100, 100, 100 and 50: 32 x 4 x 1,280 x 32,500
 * = 5,324,800,000. vLLM profiles items of 750 tokens of 3,584: 10 at
 * 8,192 batched, 53,760,000 bytes.
 */
static void omni(void)
{
	struct kv_model *m = test_load_path(OMNI);
	struct kv_audio_clip c;
	struct kv_vision_flops fl;
	struct kv_params p;
	uint64_t items, bytes;
	char err[KV_ERRLEN];
	CHECK(m->audio && m->aud_kind == KV_AUD_OMNI);
	CHECK_U64(m->aud_window, 100);
	CHECK_U64(m->aud_out, 3584);
	CHECK(kv_model_params(m, &p, err) == 0);
	CHECK_U64(p.total, 7615616512ULL);
	CHECK_U64(kv_audio_params(m), 639647232ULL);
	CHECK(kv_audio_clip(m, 10, &c, err) == 0);
	CHECK_U64(c.tokens, 250);
	CHECK_U64(c.positions, 500);
	kv_audio_flops(m, &c, 1, &fl);
	CHECK_NEAR(fl.linear, 637337600000.0, 1);
	CHECK_NEAR(fl.attn, 8192000000.0, 1);
	CHECK_U64(fl.seq, 100);
	CHECK(kv_audio_clip(m, 7, &c, err) == 0);
	kv_audio_flops(m, &c, 1, &fl);
	CHECK_NEAR(fl.attn, 5324800000.0, 1);
	CHECK(kv_audio_clip(m, 31, &c, err) == 0); /* its first 30 s */
	CHECK_U64(c.tokens, 750);
	CHECK_NEAR(c.kept_s, 30, 0);
	CHECK(kv_audio_encoder(m, KV_DTYPE_BF16, 8192, 1024, 8192, &items,
			       &bytes) == 0);
	CHECK_U64(items, 10);
	CHECK_U64(bytes, 53760000);
	kv_model_free(m);
}

int main(void)
{
	qwen2_config();
	params();
	clips();
	flops();
	encoder();
	row_effects();
	refusals();
	encoder_time();
	omni();
	return test_done("audio");
}
