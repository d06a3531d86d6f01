/*
 * model_audio.c - how an audio tower is built, as audio_config says:
 * what audio.h needs to derive the tower's weights, a clip's tokens and
 * the tower's FLOPs. The towers modelled are Whisper encoders (two
 * convolutions, positions, pre-norm layers): Qwen2-Audio's and Voxtral's
 * (audio_config), Qwen2.5-Omni's (its thinker_config's); another
 * wrapper's (Gemma 3n's) is left KV_AUD_NONE and refused by name where
 * audio is asked.
 */
#include <string.h>

#include "model_int.h"

/*
 * The encoder's shape under either family's names, over the defaults
 * both config classes share (transformers Qwen2AudioEncoderConfig, and
 * VoxtralEncoderConfig whose attribute_map reads d_model as hidden_size,
 * encoder_layers as num_hidden_layers, encoder_ffn_dim as
 * intermediate_size; configuration_qwen2_audio.py commit c12eb355,
 * configuration_voxtral.py commit d3471d18): 32 layers of width 1,280,
 * MLP 5,120, 128 mel bins, 1,500 positions.
 */
static int read_encoder(struct cfg *a, struct kv_model *m)
{
	static const char *const layers[] = {"encoder_layers",
					     "num_hidden_layers", NULL};
	static const char *const width[] = {"d_model", "hidden_size", NULL};
	static const char *const ffn[] = {"encoder_ffn_dim",
					  "intermediate_size", NULL};
	uint64_t l;
	int e;
	if ((e = cfg_uint_any(a, layers, false, 32, 1, MAX_LAYERS, &l)) ||
	    (e = cfg_uint_any(a, width, false, 1280, 1, MAX_HIDDEN,
			      &m->aud_hidden)) ||
	    (e = cfg_uint_any(a, ffn, false, 5120, 1, MAX_FFN,
			      &m->aud_ffn)) ||
	    (e = cfg_u32(a, "num_mel_bins", false, 128, 1, 4096,
			 &m->aud_mels)) ||
	    (e = cfg_u32(a, "max_source_positions", false, 1500, 2,
			 1u << 20, &m->aud_pos)))
		return e;
	m->aud_layers = (uint32_t)l;
	/* Qwen2.5-Omni's (transformers Qwen2_5OmniAudioEncoderConfig):
	 * n_window 100, output_dim 3,584 */
	if (m->aud_kind == KV_AUD_OMNI &&
	    ((e = cfg_u32(a, "n_window", false, 100, 1, 1u << 20,
			  &m->aud_window)) ||
	     (e = cfg_uint(a, "output_dim", false, 3584, 1, MAX_HIDDEN,
			   &m->aud_out))))
		return e;
	/* Voxtral stacks intermediate_size / hidden_size frames a token */
	if (m->aud_kind == KV_AUD_VOXTRAL &&
	    (m->aud_ffn % m->aud_hidden || m->aud_pos % (m->aud_ffn /
							  m->aud_hidden)))
		return cfg_fail(a, "intermediate_size: must be a multiple of "
				"hidden_size (%llu) that divides "
				"max_source_positions (%u), got %llu",
				(unsigned long long)m->aud_hidden, m->aud_pos,
				(unsigned long long)m->aud_ffn);
	return 0;
}

int model_audio_read(struct cfg *c, struct kv_model *m)
{
	/* the wrapper's own fields, not its text_config's */
	struct cfg top = *c, a, th;
	const char *type = NULL;
	bool has;
	int e;
	top.text = top.root;
	top.text_name = NULL;
	if ((e = cfg_nested(&top, "audio_config", &a, &m->audio)))
		return e;
	if (!m->audio && /* Qwen2.5-Omni's, in its thinker */
	    ((e = cfg_nested(&top, "thinker_config", &th, &has)) ||
	     (has && (e = cfg_nested(&th, "audio_config", &a, &m->audio)))))
		return e;
	if (!m->audio)
		return 0;
	if ((e = cfg_str(&top, "model_type", &type)))
		return e;
	type = type ? type : "";
	if (!strcmp(type, "qwen2_5_omni"))
		m->aud_kind = KV_AUD_OMNI;
	else if (!strcmp(type, "qwen2_audio"))
		m->aud_kind = KV_AUD_QWEN2;
	else if (!strcmp(type, "voxtral"))
		m->aud_kind = KV_AUD_VOXTRAL;
	else
		return 0;
	return read_encoder(&a, m);
}
