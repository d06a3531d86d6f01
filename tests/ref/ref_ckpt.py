#!/usr/bin/env python3
"""ref_ckpt.py - an independent NumPy forward pass over a checkpoint's own
files, to check the engine's logits when it runs a real checkpoint.

It reads config.json and the safetensors file(s) of a folder itself (the
8-byte header length, the JSON header, the raw data; a sharded index's
weight_map), runs GPT-2 or a Llama-family model the way Transformers'
modeling code does (GPT-2's Conv1D x @ W + b, LayerNorm, gelu_new, learned
positions, tied head; Llama's x @ W.T, RMSNorm, rotate-half RoPE (with
its rope_scaling: linear or Llama 3's), grouped
K/V heads, SwiGLU, q/k/v biases when stored, Qwen3's per-head RMSNorm of
q and k (q_norm, k_norm) before rotation when stored, lm_head unless tied) in
float64 over the whole text, and compares the last token's logits.

Usage: ref_ckpt.py CASE_FILE TOL. CASE_FILE holds "dir PATH", then
"tokens ..." and "logits ..." lines per sequence. Exit 0 when every logit
is within TOL, 1 when not, 77 without NumPy.
"""
import json
import os
import struct
import sys

try:
    import numpy as np
except ImportError:
    print("ref_ckpt.py: NumPy is missing; skipped")
    sys.exit(77)


def read_file(path, out):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        raw = data[b:e]
        if t["dtype"] == "F32":
            a = np.frombuffer(raw, "<f4")
        elif t["dtype"] == "F16":
            a = np.frombuffer(raw, "<f2")
        elif t["dtype"] == "BF16":
            u = np.frombuffer(raw, "<u2").astype(np.uint32) << 16
            a = u.view(np.float32)
        else:
            continue
        out[name] = a.astype(np.float64).reshape(t["shape"])


def load(folder):
    w = {}
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        for shard in sorted(set(json.load(open(index))["weight_map"]
                                .values())):
            read_file(os.path.join(folder, shard), w)
    else:
        read_file(os.path.join(folder, "model.safetensors"), w)
    return json.load(open(os.path.join(folder, "config.json"))), w


def layernorm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def rmsnorm(x, g, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def attend(q, k, v):
    """q (T, H, hd), k and v (T, KV, hd): causal, K/V head i // group."""
    t, h, hd = q.shape
    group = h // k.shape[1]
    out = np.zeros(q.shape)
    for i in range(h):
        for p in range(t):
            s = k[:p + 1, i // group] @ q[p, i] / np.sqrt(hd)
            e = np.exp(s - s.max())
            out[p, i] = (e / e.sum()) @ v[:p + 1, i // group]
    return out.reshape(t, h * hd)


def gpt2(c, w, tokens):
    def g(n):
        return w[n] if n in w else w["transformer." + n]
    d, h = c["n_embd"], c["n_head"]
    eps = c.get("layer_norm_epsilon", 1e-5)
    t = len(tokens)
    x = g("wte.weight")[tokens] + g("wpe.weight")[:t]
    for i in range(c["n_layer"]):
        p = "h.%d." % i
        a = layernorm(x, g(p + "ln_1.weight"), g(p + "ln_1.bias"), eps)
        qkv = a @ g(p + "attn.c_attn.weight") + g(p + "attn.c_attn.bias")
        q, k, v = (qkv[:, j * d:(j + 1) * d].reshape(t, h, d // h)
                   for j in range(3))
        x = x + attend(q, k, v) @ g(p + "attn.c_proj.weight") \
            + g(p + "attn.c_proj.bias")
        a = layernorm(x, g(p + "ln_2.weight"), g(p + "ln_2.bias"), eps)
        u = a @ g(p + "mlp.c_fc.weight") + g(p + "mlp.c_fc.bias")
        u = 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) *
                                   (u + 0.044715 * u ** 3)))
        x = x + u @ g(p + "mlp.c_proj.weight") + g(p + "mlp.c_proj.bias")
    last = layernorm(x[-1], g("ln_f.weight"), g("ln_f.bias"), eps)
    return last @ g("wte.weight").T


def inv_freq(c, hd):
    """rotary frequencies, with rope_scaling as Transformers applies it
    (linear, and llama3's in _compute_llama3_parameters)"""
    f = c.get("rope_theta", 10000.0) ** (-np.arange(0, hd, 2) / hd)
    rs = c.get("rope_scaling") or {}
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        return f / rs["factor"]
    if kind != "llama3":
        return f
    factor, low, high = rs["factor"], rs["low_freq_factor"], \
        rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    wave = 2 * np.pi / f
    scaled = np.where(wave > old / low, f / factor, f)
    smooth = (old / wave - low) / (high - low)
    mid = (1 - smooth) * scaled / factor + smooth * scaled
    between = ~(wave < old / high) & ~(wave > old / low)
    return np.where(between, mid, scaled)


def rope(x, f):
    t, _, hd = x.shape
    a = np.arange(t)[:, None] * f[None, :]
    cos = np.cos(np.concatenate([a, a], -1))[:, None, :]
    sin = np.sin(np.concatenate([a, a], -1))[:, None, :]
    rot = np.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], -1)
    return x * cos + rot * sin


def llama(c, w, tokens):
    d, h = c["hidden_size"], c["num_attention_heads"]
    kv = c.get("num_key_value_heads", h)
    # Qwen3Config's head_dim defaults to 128, not hidden / heads
    hd = c.get("head_dim") or (128 if c["model_type"] == "qwen3" else d // h)
    eps = c.get("rms_norm_eps", 1e-6)
    freq = inv_freq(c, hd)
    t = len(tokens)

    def lin(x, n):
        y = x @ w[n + ".weight"].T
        return y + w[n + ".bias"] if n + ".bias" in w else y
    x = w["model.embed_tokens.weight"][tokens]
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        a = rmsnorm(x, w[p + "input_layernorm.weight"], eps)
        q = lin(a, p + "self_attn.q_proj").reshape(t, h, hd)
        k = lin(a, p + "self_attn.k_proj").reshape(t, kv, hd)
        if p + "self_attn.q_norm.weight" in w:  # Qwen3
            q = rmsnorm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rmsnorm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k = rope(q, freq), rope(k, freq)
        v = lin(a, p + "self_attn.v_proj").reshape(t, kv, hd)
        x = x + lin(attend(q, k, v), p + "self_attn.o_proj")
        a = rmsnorm(x, w[p + "post_attention_layernorm.weight"], eps)
        gt = lin(a, p + "mlp.gate_proj")
        x = x + lin(gt / (1 + np.exp(-gt)) * lin(a, p + "mlp.up_proj"),
                    p + "mlp.down_proj")
    last = rmsnorm(x[-1], w["model.norm.weight"], eps)
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return last @ head.T


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    folder, seqs, logits = None, [], []
    for line in open(sys.argv[1]):
        f = line.split()
        if f and f[0] == "dir":
            folder = f[1]
        elif f and f[0] == "tokens":
            seqs.append([int(x) for x in f[1:]])
        elif f and f[0] == "logits":
            logits.append(np.array([float(x) for x in f[1:]]))
    c, w = load(folder)
    run = gpt2 if c["model_type"] == "gpt2" else llama
    worst = 0.0
    for toks, got in zip(seqs, logits):
        worst = max(worst, float(np.abs(run(c, w, toks) - got).max()))
    print("ref_ckpt.py: %s, %d sequences, largest difference %.3g" %
          (c["model_type"], len(seqs), worst))
    return 0 if worst <= float(sys.argv[2]) else 1


if __name__ == "__main__":
    sys.exit(main())
