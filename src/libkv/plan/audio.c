/*
 * audio.c - the audio tower of an audio-language model, as a serving
 * engine sizes it: its weights, the tokens a clip takes in the prompt,
 * the tower's FLOPs on a clip and the encoder outputs vLLM holds while
 * it measures its memory. What an engine models of audio is its row's
 * (server.h, audio); the arithmetic is here.
 *
 * Both towers modelled are Whisper encoders fed by Whisper's feature
 * extractor (transformers feature_extraction_whisper.py; the models'
 * preprocessor_config.json): 16,000 samples a second, a mel frame every
 * 160 (100 a second), 30-s chunks of 3,000 frames. conv1 (kernel 3,
 * stride 1) and conv2 (kernel 3, stride 2) halve a chunk to
 * max_source_positions (1,500) positions.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "kv/audio.h"
#include "kv/server.h"

#define SAMPLE_RATE 16000 /* samples a second */
#define HOP 160           /* samples a mel frame */

bool kv_audio_refuses(const struct kv_fit_in *in, char *err)
{
	const struct kv_model *m = in->m;
	struct kv_audio_clip c;
	char why[KV_ERRLEN];
	if (!(in->audio_s > 0))
		return false;
	if (!m->audio) {
		snprintf(err, KV_ERRLEN, "%s: --audio-seconds: the model has "
			 "no audio tower (no audio_config)", m->name);
		return true;
	}
	if (m->aud_kind == KV_AUD_NONE) {
		snprintf(err, KV_ERRLEN, "%s: --audio-seconds: the audio "
			 "tower of %s is not modelled (Qwen2-Audio's, "
			 "Voxtral's and Qwen2.5-Omni's are)", m->name,
			 kv_model_class(m));
		return true;
	}
	if (kv_audio_clip(m, in->audio_s, &c, why)) {
		snprintf(err, KV_ERRLEN, "%s: %.500s", m->name, why);
		return true;
	}
	if (in->server && !in->server->audio) {
		snprintf(err, KV_ERRLEN, "%s: --audio-seconds: %s's audio "
			 "encoder is not modelled (vLLM's and the ideal "
			 "engine's are)", m->name, in->server->label);
		return true;
	}
	return false;
}

/*
 * Qwen2-Audio (transformers processing_qwen2_audio.py, commit 718881e4:
 * the feature extractor called with padding="max_length", so a clip is
 * padded to 30 s and truncated there, a longer clip served as its
 * first 30 s; vLLM qwen2_audio.py, commit
 * cd1e8452, _get_feat_extract_output_lengths): of a clip's L frames
 * (ceil(samples / 160)), conv2 keeps (L - 1) / 2 + 1 and the average
 * pool (kernel 2, stride 2) (that - 2) / 2 + 1 tokens, 25 a second, 750
 * at 30 s; vLLM refuses a clip of none. The tower runs the whole padded
 * chunk, its projector all 750 pooled rows. Qwen2.5-Omni's processor
 * pads and truncates alike (processing_qwen2_5_omni.py, audio_kwargs)
 * and its tower (modeling_qwen2_5_omni.py, Qwen2_5OmniAudioEncoder)
 * runs the clip's L frames alone, in windows of 2 n_window frames each
 * attending within itself, its projector on the tokens.
 */
static int qwen2_clip(const struct kv_model *m, double s,
		      struct kv_audio_clip *out, char *err)
{
	uint64_t chunk = 2ULL * m->aud_pos; /* frames */
	double max_s = (double)chunk * HOP / SAMPLE_RATE;
	uint64_t samples = (uint64_t)llround(s * SAMPLE_RATE);
	uint64_t frames = (samples + HOP - 1) / HOP, feat;
	bool omni = m->aud_kind == KV_AUD_OMNI;
	out->kept_s = s;
	if (frames > chunk) { /* the feature extractor keeps the first */
		frames = chunk;
		out->kept_s = max_s;
	}
	feat = frames ? (frames - 1) / 2 + 1 : 0;
	if (feat < 2) {
		snprintf(err, KV_ERRLEN, "--audio-seconds: %g: too short for "
			 "one audio token (at least %g s)", s,
			 (double)(2 * HOP + 1) / SAMPLE_RATE);
		return KV_EINVAL;
	}
	out->chunks = 1;
	out->tokens = (feat - 2) / 2 + 1;
	out->frames = omni ? frames : chunk;
	out->positions = omni ? feat : m->aud_pos;
	out->window = omni ? m->aud_window : 0;
	out->rows = omni ? out->tokens : (m->aud_pos - 2) / 2 + 1;
	return 0;
}

/*
 * Voxtral (mistral_common's audio encoder, as vLLM voxtral.py, commit
 * 00955cff, calls it: the waveform padded to whole 30-s chunks, one token
 * a hop of 8 frames; transformers modular_voxtral.py, commit 00aa0f5d:
 * the encoder's output reshaped to rows of intermediate_size, so
 * intermediate_size / hidden_size positions a token): 375 tokens a
 * chunk, 12.5 a second, each chunk a pass of the tower.
 */
static void voxtral_clip(const struct kv_model *m, double s,
			 struct kv_audio_clip *out)
{
	uint64_t chunk = 2ULL * m->aud_pos * HOP; /* samples */
	uint64_t samples = (uint64_t)llround(s * SAMPLE_RATE);
	out->chunks = samples ? (samples + chunk - 1) / chunk : 1;
	out->kept_s = s;
	out->frames = 2ULL * m->aud_pos;
	out->positions = m->aud_pos;
	out->rows = m->aud_pos / (m->aud_ffn / m->aud_hidden);
	out->tokens = out->chunks * out->rows;
}

int kv_audio_clip(const struct kv_model *m, double s,
		  struct kv_audio_clip *out, char *err)
{
	*out = (struct kv_audio_clip){0};
	switch (m->audio ? m->aud_kind : KV_AUD_NONE) {
	case KV_AUD_QWEN2:
	case KV_AUD_OMNI: return qwen2_clip(m, s, out, err);
	case KV_AUD_VOXTRAL: voxtral_clip(m, s, out); return 0;
	case KV_AUD_NONE: break;
	}
	snprintf(err, KV_ERRLEN, "--audio-seconds: the model's audio tower "
		 "is not modelled");
	return KV_EINVAL;
}

uint64_t kv_audio_tokens(const struct kv_model *m, double s)
{
	struct kv_audio_clip c;
	char err[KV_ERRLEN];
	return kv_audio_clip(m, s, &c, err) ? 0 : c.tokens;
}

/*
 * The Whisper encoder (transformers modeling_qwen2_audio.py, commit
 * 01ae98ae, Qwen2AudioEncoder, which VoxtralEncoder is): conv1 (mels x h
 * x 3 and a bias), conv2 (h x h x 3 and a bias), max_source_positions
 * learned positions, per layer q, v, o with biases and k without
 * (Qwen2AudioAttention), fc1 and fc2 with biases, two LayerNorms; the
 * final LayerNorm. Then the projector: Qwen2-Audio's one linear layer
 * with a bias into the text model's width (vLLM qwen2_audio.py,
 * Qwen2AudioMultiModalProjector); Voxtral's intermediate_size to the
 * text width and the text width to itself, without biases
 * (VoxtralMultiModalProjector). Qwen2.5-Omni's (modeling_qwen2_5_omni.py,
 * Qwen2_5OmniAudioEncoder): its positions sinusoidal (a buffer, not
 * stored), then ln_post, proj (h x output_dim and a bias) and
 * audio_bos_eos_token (2 x output_dim).
 */
uint64_t kv_audio_params(const struct kv_model *m)
{
	if (!m->audio || m->aud_kind == KV_AUD_NONE)
		return 0;
	uint64_t h = m->aud_hidden, f = m->aud_ffn, t = m->hidden;
	uint64_t o = m->aud_out ? m->aud_out : t;
	uint64_t layer = 4 * h * h + 3 * h + (h * f + f) + (f * h + h) +
			 4 * h;
	uint64_t pos = m->aud_kind == KV_AUD_OMNI ? 0 : m->aud_pos;
	uint64_t enc = (uint64_t)m->aud_mels * h * 3 + h + h * h * 3 + h +
		       pos * h + m->aud_layers * layer + 2 * h;
	switch (m->aud_kind) {
	case KV_AUD_VOXTRAL: return enc + f * t + t * t;
	case KV_AUD_OMNI: return enc + h * o + o + 2 * o;
	default: return enc + h * t + t;
	}
}

/* Attention's sum of squared sequences over c's pass: one of its
 * positions, or (Qwen2.5-Omni) its whole windows of `window` positions
 * (2 window frames each) and the rest. */
static double attn_squares(const struct kv_audio_clip *c)
{
	double n = (double)c->positions, w = (double)c->window;
	if (!c->window || c->positions <= c->window)
		return n * n;
	double whole = (double)(c->frames / (2 * c->window));
	double rest = n - whole * w;
	return whole * w * w + rest * rest;
}

/*
 * Two FLOPs a weight a row, attention's scores and weighted sum 4 s h a
 * row over s positions. Per pass of n positions: conv1 over its frames
 * (3 mels x h a frame), conv2 over n (3 h x h), each layer's 4 h^2
 * projections, its MLP (2 h f) and attention over the pass (Qwen2.5-Omni
 * over each window; elsewhere the padding computed and masked); then the
 * projector on the pass's rows (Qwen2-Audio's h x text, Qwen2.5-Omni's h
 * x output_dim, Voxtral's f x text and text x text).
 */
void kv_audio_flops(const struct kv_model *m, const struct kv_audio_clip *c,
		    uint32_t tp, struct kv_vision_flops *out)
{
	double n = (double)c->positions, h = (double)m->aud_hidden;
	double f = (double)m->aud_ffn, t = (double)m->hidden;
	double o = m->aud_out ? (double)m->aud_out : t;
	double L = m->aud_layers, rows = (double)c->rows;
	double conv = 2 * (double)c->frames * 3 * m->aud_mels * h +
		      2 * n * 3 * h * h;
	double proj = m->aud_kind == KV_AUD_VOXTRAL
			      ? 2 * rows * (f * t + t * t)
			      : 2 * rows * h * o;
	double lin = conv + L * 2 * n * (4 * h * h + 2 * h * f) + proj;
	double k = (double)c->chunks / (tp ? tp : 1);
	out->linear = k * lin;
	out->attn = k * L * 4 * attn_squares(c) * h;
	out->rows = c->chunks * c->positions;
	out->seq = c->window && c->window < c->positions ? c->window
							 : c->positions;
}

int kv_audio_encoder(const struct kv_model *m, enum kv_dtype t,
		     uint64_t batched, uint64_t seqs, uint64_t max_len,
		     uint64_t *items, uint64_t *bytes)
{
	uint64_t tok = 0;
	if (m->audio && (m->aud_kind == KV_AUD_QWEN2 ||
			 m->aud_kind == KV_AUD_OMNI))
		tok = (m->aud_pos - 2) / 2 + 1;
	else if (m->audio && m->aud_kind == KV_AUD_VOXTRAL)
		tok = max_len;
	return kv_mm_encoder(m, t, tok, 1, batched, seqs, max_len, items,
			     bytes);
}

void kv_towers_flops(const struct kv_fit_in *in,
		     struct kv_vision_flops out[2], uint64_t params[2])
{
	const struct kv_model *m = in->m;
	struct kv_vision_image im;
	struct kv_audio_clip c;
	char err[KV_ERRLEN];
	out[0] = out[1] = (struct kv_vision_flops){0};
	params[0] = params[1] = 0;
	if (in->images &&
	    !kv_vision_image(m, in->image_w, in->image_h, &im, err)) {
		double n = (double)in->images;
		kv_vision_flops(m, &im, in->tp, &out[0]);
		out[0].linear *= n;
		out[0].attn *= n;
		out[0].rows *= in->images;
		params[0] = kv_vision_params(m);
	}
	if (in->audio_s > 0 && !kv_audio_clip(m, in->audio_s, &c, err)) {
		kv_audio_flops(m, &c, in->tp, &out[1]);
		params[1] = kv_audio_params(m);
	}
}
