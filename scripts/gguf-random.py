#!/usr/bin/env python3
"""gguf-gpt2.py - a GPT-2-shaped GGUF with random weights, for llama.cpp.

Usage: gguf-gpt2.py --out FILE [--weights-dtype f32|f16|bf16]
                    [--layers N] [--width N] [--heads N] [--ff N]
                    [--vocab N] [--positions N] [--seed N]

Writes what llama.cpp's loader reads as its "gpt2" architecture: token and
position embeddings, per layer a fused QKV projection, the attention output,
the MLP's up and down projections, each with its bias, the layer norms, and
no output matrix (GPT-2 ties its head to the token embedding, as kvtools'
engine does). The matrices and embeddings are stored in --weights-dtype;
norm gains and biases in float32, as llama.cpp's converter keeps 1-D
tensors. Defaults are GPT-2 small's shape (12 layers, width 768, 12 heads,
MLP 3072, 50,257 tokens); --positions defaults to 16,384 so that contexts
past GPT-2's own 1,024 stay inside the position table.

The tokenizer is synthetic but well formed: GPT-2's 256 byte symbols, then
tokens that each merge two of them (one merge rule apiece), then
<|endoftext|>. Only the shape and the bytes a step reads matter to a speed
comparison; the weights are N(0, 0.02) from --seed, the gains 1, the biases
0.

Needs NumPy and llama.cpp's gguf-py (put its gguf-py folder on PYTHONPATH).
"""
import argparse
import sys

try:
    import numpy as np
except ImportError:
    print("gguf-gpt2.py: needs NumPy", file=sys.stderr)
    sys.exit(2)
try:
    import gguf
except ImportError:
    print("gguf-gpt2.py: needs llama.cpp's gguf-py on PYTHONPATH",
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


def vocabulary(n):
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


def main():
    ap = argparse.ArgumentParser(
        prog="gguf-gpt2.py",
        description="A GPT-2-shaped GGUF with random weights.")
    ap.add_argument("--out", required=True)
    ap.add_argument("--weights-dtype", default="f16",
                    choices=("f32", "f16", "bf16"))
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--ff", type=int, default=3072)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--positions", type=int, default=16384)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for name in ("layers", "width", "heads", "ff", "positions"):
        if getattr(a, name) < 1:
            ap.error("--%s: must be positive" % name)
    if a.width % a.heads:
        ap.error("--width %d: must be a multiple of --heads (%d)"
                 % (a.width, a.heads))
    try:
        tokens, types, merges = vocabulary(a.vocab)
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

    w = gguf.GGUFWriter(a.out, "gpt2")
    w.add_name("gpt2-shape-random-%s" % a.weights_dtype)
    w.add_context_length(a.positions)
    w.add_embedding_length(D)
    w.add_feed_forward_length(F)
    w.add_block_count(a.layers)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.heads)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(int(ftype))
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


if __name__ == "__main__":
    main()
