#!/usr/bin/env python3
"""gguf-random.py - a GGUF of a model's shape with random weights, for llama.cpp.

Usage: gguf-random.py --out FILE [--arch gpt2|llama] [--config-out FILE]
                      [--weights-dtype f32|f16|bf16] [--layers N]
                      [--width N] [--heads N] [--kv-heads N] [--ff N]
                      [--vocab N] [--positions N] [--seed N]

Writes what llama.cpp's loader reads as the architecture named:

  gpt2   token and position embeddings, per layer a fused QKV projection,
         the attention output, the MLP's up and down projections, each
         with its bias, the layer norms, and no output matrix (GPT-2 ties
         its head to the token embedding, as kvtools' engine does).
         Defaults: GPT-2 small (12 layers, width 768, 12 heads, MLP 3072,
         50,257 tokens), a byte-level BPE vocabulary (GPT-2's 256 byte
         symbols, tokens that each merge two of them, <|endoftext|>).
  llama  the token embedding, per layer RMS norms, separate Q, K and V
         projections (--kv-heads of them for K and V: grouped-query
         attention), the attention output, a gated MLP (gate, up, down),
         no biases, and an output matrix of its own. Defaults: 12 layers,
         width 768, 12 heads, 4 K/V heads, MLP 3072, 32,000 tokens, a
         SentencePiece vocabulary (<unk> <s> </s>, the 256 byte tokens,
         then pieces, each with a score and a type).

--config-out writes the same shape as a Hugging Face config.json, the
model kvtools runs: GPT2LMHeadModel's keys, or LlamaForCausalLM's with
tie_word_embeddings false.

The matrices and embeddings are stored in --weights-dtype; norm gains and
biases in float32, as llama.cpp's converter keeps 1-D tensors.
--positions (default 16,384) is the context the file declares and, for
gpt2, the length of the position table, so that contexts past GPT-2's own
1,024 stay inside it. Only the shape and the bytes a step reads matter to
a speed comparison: the weights are N(0, 0.02) from --seed, the gains 1,
the biases 0.

Needs NumPy and llama.cpp's gguf-py (put its gguf-py folder on PYTHONPATH).
"""
import argparse
import json
import sys

try:
    import numpy as np
except ImportError:
    print("gguf-random.py: needs NumPy", file=sys.stderr)
    sys.exit(2)
try:
    import gguf
except ImportError:
    print("gguf-random.py: needs llama.cpp's gguf-py on PYTHONPATH",
          file=sys.stderr)
    sys.exit(2)


def byte_symbols():
    """GPT-2's printable stand-ins for the 256 byte values, in byte order."""
    keep = (list(range(ord("!"), ord("~") + 1)) +
            list(range(ord("\u00a1"), ord("\u00ac") + 1)) +
            list(range(ord("\u00ae"), ord("\u00ff") + 1)))
    out, extra = [], 0
    for b in range(256):
        if b in keep:
            out.append(chr(b))
        else:
            out.append(chr(256 + extra))
            extra += 1
    return out


def bpe_vocabulary(n):
    """n tokens: the byte symbols, two-symbol merges, <|endoftext|> last."""
    sym = byte_symbols()
    tokens, merges = list(sym), []
    need = n - 1 - len(tokens)
    if need < 0 or need > len(sym) * len(sym):
        raise ValueError("vocabulary of %d tokens: must be 257 to %d"
                         % (n, 257 + len(sym) * len(sym)))
    for i in range(need):
        a, b = sym[i // len(sym)], sym[i % len(sym)]
        tokens.append(a + b)
        merges.append(a + " " + b)
    tokens.append("<|endoftext|>")
    types = [gguf.TokenType.NORMAL] * (n - 1) + [gguf.TokenType.CONTROL]
    return tokens, types, merges


def spm_vocabulary(n):
    """n SentencePiece tokens: <unk> <s> </s>, the byte tokens, pieces."""
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    if n < len(tokens) + 1:
        raise ValueError("vocabulary of %d tokens: must be at least %d"
                         % (n, len(tokens) + 1))
    types = ([gguf.TokenType.UNKNOWN] + [gguf.TokenType.CONTROL] * 2 +
             [gguf.TokenType.BYTE] * 256)
    k = len(tokens)
    tokens += ["\u2581t%d" % i for i in range(n - k)]
    types += [gguf.TokenType.NORMAL] * (n - k)
    scores = [0.0] * k + [-float(i) for i in range(n - k)]
    return tokens, types, scores


def main():
    ap = argparse.ArgumentParser(
        prog="gguf-random.py",
        description="A GGUF of a model's shape with random weights.")
    ap.add_argument("--out", required=True)
    ap.add_argument("--arch", default="gpt2", choices=("gpt2", "llama"))
    ap.add_argument("--config-out")
    ap.add_argument("--weights-dtype", default="f16",
                    choices=("f32", "f16", "bf16"))
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--kv-heads", type=int)
    ap.add_argument("--ff", type=int, default=3072)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--positions", type=int, default=16384)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    llama = a.arch == "llama"
    if a.vocab is None:
        a.vocab = 32000 if llama else 50257
    if a.kv_heads is None:
        a.kv_heads = 4 if llama else a.heads
    elif not llama:
        ap.error("--kv-heads: gpt2 has as many as --heads")
    for name in ("layers", "width", "heads", "kv_heads", "ff", "positions"):
        if getattr(a, name) < 1:
            ap.error("--%s: must be positive" % name.replace("_", "-"))
    if a.width % a.heads:
        ap.error("--width %d: must be a multiple of --heads (%d)"
                 % (a.width, a.heads))
    if a.heads % a.kv_heads:
        ap.error("--heads %d: must be a multiple of --kv-heads (%d)"
                 % (a.heads, a.kv_heads))
    try:
        if llama:
            tokens, types, scores = spm_vocabulary(a.vocab)
        else:
            tokens, types, merges = bpe_vocabulary(a.vocab)
    except ValueError as e:
        ap.error(str(e))

    qtype = {"f32": gguf.GGMLQuantizationType.F32,
             "f16": gguf.GGMLQuantizationType.F16,
             "bf16": gguf.GGMLQuantizationType.BF16}[a.weights_dtype]
    ftype = {"f32": gguf.LlamaFileType.ALL_F32,
             "f16": gguf.LlamaFileType.MOSTLY_F16,
             "bf16": gguf.LlamaFileType.MOSTLY_BF16}[a.weights_dtype]
    rng = np.random.default_rng(a.seed)
    D, F = a.width, a.ff

    w = gguf.GGUFWriter(a.out, a.arch)
    w.add_name("%s-shape-random-%s" % (a.arch, a.weights_dtype))
    w.add_context_length(a.positions)
    w.add_embedding_length(D)
    w.add_feed_forward_length(F)
    w.add_block_count(a.layers)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_file_type(int(ftype))
    if llama:
        w.add_layer_norm_rms_eps(1e-5)
        w.add_rope_dimension_count(D // a.heads)
        w.add_rope_freq_base(10000.0)
        w.add_vocab_size(a.vocab)
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types([int(t) for t in types])
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
        w.add_add_bos_token(True)
    else:
        w.add_layer_norm_eps(1e-5)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("gpt-2")
        w.add_token_list(tokens)
        w.add_token_types([int(t) for t in types])
        w.add_token_merges(merges)
        w.add_bos_token_id(a.vocab - 1)
        w.add_eos_token_id(a.vocab - 1)
        w.add_add_bos_token(False)

    def matrix(name, rows, cols):
        """A (rows, cols) matrix: ggml's shape {cols, rows}, in qtype."""
        x = rng.standard_normal((rows, cols), dtype=np.float32) * 0.02
        if qtype == gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, x)
        elif qtype == gguf.GGMLQuantizationType.F16:
            w.add_tensor(name, x.astype(np.float16))
        else:
            w.add_tensor(name, gguf.quants.quantize(x, qtype),
                         raw_dtype=qtype)

    def vector(name, n, value):
        w.add_tensor(name, np.full(n, value, dtype=np.float32))

    matrix("token_embd.weight", a.vocab, D)
    if llama:
        KV = a.kv_heads * (D // a.heads)
        vector("output_norm.weight", D, 1.0)
        matrix("output.weight", a.vocab, D)
        for i in range(a.layers):
            p = "blk.%d." % i
            vector(p + "attn_norm.weight", D, 1.0)
            matrix(p + "attn_q.weight", D, D)
            matrix(p + "attn_k.weight", KV, D)
            matrix(p + "attn_v.weight", KV, D)
            matrix(p + "attn_output.weight", D, D)
            vector(p + "ffn_norm.weight", D, 1.0)
            matrix(p + "ffn_gate.weight", F, D)
            matrix(p + "ffn_up.weight", F, D)
            matrix(p + "ffn_down.weight", D, F)
    else:
        matrix("position_embd.weight", a.positions, D)
        vector("output_norm.weight", D, 1.0)
        vector("output_norm.bias", D, 0.0)
        for i in range(a.layers):
            p = "blk.%d." % i
            vector(p + "attn_norm.weight", D, 1.0)
            vector(p + "attn_norm.bias", D, 0.0)
            matrix(p + "attn_qkv.weight", 3 * D, D)
            vector(p + "attn_qkv.bias", 3 * D, 0.0)
            matrix(p + "attn_output.weight", D, D)
            vector(p + "attn_output.bias", D, 0.0)
            vector(p + "ffn_norm.weight", D, 1.0)
            vector(p + "ffn_norm.bias", D, 0.0)
            matrix(p + "ffn_up.weight", F, D)
            vector(p + "ffn_up.bias", F, 0.0)
            matrix(p + "ffn_down.weight", D, F)
            vector(p + "ffn_down.bias", D, 0.0)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    if a.config_out:
        with open(a.config_out, "w") as f:
            json.dump(hf_config(a), f, indent=2)
            f.write("\n")


def hf_config(a):
    """The shape as the Hugging Face config.json of its architecture."""
    dtype = {"f32": "float32", "f16": "float16",
             "bf16": "bfloat16"}[a.weights_dtype]
    if a.arch == "gpt2":
        return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
                "n_layer": a.layers, "n_embd": a.width, "n_head": a.heads,
                "n_inner": a.ff, "n_positions": a.positions,
                "vocab_size": a.vocab, "layer_norm_epsilon": 1e-5,
                "activation_function": "gelu_new",
                "tie_word_embeddings": True, "torch_dtype": dtype}
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "num_hidden_layers": a.layers, "hidden_size": a.width,
            "num_attention_heads": a.heads,
            "num_key_value_heads": a.kv_heads,
            "intermediate_size": a.ff, "max_position_embeddings": a.positions,
            "vocab_size": a.vocab, "rms_norm_eps": 1e-5,
            "rope_theta": 10000.0, "hidden_act": "silu",
            "tie_word_embeddings": False, "torch_dtype": dtype}


if __name__ == "__main__":
    main()
