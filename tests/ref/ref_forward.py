#!/usr/bin/env python3
"""ref_forward.py - an independent, straightforward NumPy forward pass of
the engine's model, to check the engine's logits against.

It rebuilds the weights from the generator documented in
include/kv/engine.h and src/libkv/engine/engine.c (splitmix64 per element, nothing
shared with the C code), runs the whole text through the block in float64,
plainly (no cache, no grouping tricks: each query head looks up its KV head
as i // group), and compares the logits of each sequence's last token.

Usage: ref_forward.py CASE_FILE TOL. CASE_FILE holds lines "key value...":
the shape, the seed, the weights' type (weights f32, bf16 or f16: every
draw, matrices, biases and norm gains alike, rounded to it, to nearest
even), whether q and k are normed per head
(qk_norm 1, as Qwen3), the tokens of each sequence and the engine's
logits.
Exit 0 when every logit is within TOL, 1 when not, 77 without NumPy.
"""
import sys

try:
    import numpy as np
except ImportError:
    print("ref_forward.py: NumPy is missing; skipped")
    sys.exit(77)

M64 = (1 << 64) - 1
G = 0x9E3779B97F4A7C15


def mix_int(z):
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def mix_arr(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def draw(seed, tid, n):
    """n values uniform on [-1, 1) of stream tid, as float32."""
    key = mix_int(seed + G * (tid + 1))
    j = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = mix_arr(np.uint64(key) + np.uint64(G) * j)
    return (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -23) \
        - np.float32(1.0)


WT = "f32"  # the weights' type in the engine: f32, bf16 or f16


def rounded(x):
    """float32 x as the engine keeps a weight of type WT."""
    if WT == "f16":
        return x.astype(np.float16).astype(np.float32)
    if WT == "bf16":
        u = x.view(np.uint32).astype(np.uint64)
        u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
        return u.astype(np.uint32).view(np.float32)
    return x


def mat(seed, tid, rows, cols):
    return rounded(np.float32(0.034641016) * draw(seed, tid, rows * cols)) \
        .reshape(rows, cols).astype(np.float64)


def bias(seed, tid, n):
    return rounded(np.float32(0.02) * draw(seed, tid, n)).astype(np.float64)


def gain(seed, tid, n):
    return rounded(np.float32(1.0) + np.float32(0.1) * draw(seed, tid, n)) \
        .astype(np.float64)


def layernorm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def rmsnorm(x, g, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def rope(x, theta):
    """x (T, heads, hd) at positions 0..T-1, rotate-half form."""
    t, _, hd = x.shape
    half = hd // 2
    f = theta ** (-2.0 * np.arange(half) / hd)
    a = np.arange(t)[:, None] * f[None, :]
    c = np.cos(a).astype(np.float32).astype(np.float64)[:, None, :]
    s = np.sin(a).astype(np.float32).astype(np.float64)[:, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


def forward(p, tokens):
    seed = p["seed"]
    gpt2 = p["family"] == "gpt2"
    d, H, KV, hd, F, V = (p[k] for k in
                          ("dim", "heads", "kv_heads", "hd", "ffn", "vocab"))
    eps = p["eps"]
    T = len(tokens)
    wte = mat(seed, 0, V, d)
    x = wte[tokens]
    if gpt2:
        x = x + mat(seed, 1, T, d)
    for layer in range(p["layers"]):
        b = 16 * (layer + 1)
        if gpt2:
            h = layernorm(x, gain(seed, b + 0, d), bias(seed, b + 1, d), eps)
        else:
            h = rmsnorm(x, gain(seed, b + 0, d), eps)
        nq = (H + 2 * KV) * hd
        qkv = h @ mat(seed, b + 2, d, nq)
        if p["qkv_bias"]:
            qkv = qkv + bias(seed, b + 3, nq)
        q = qkv[:, :H * hd].reshape(T, H, hd)
        k = qkv[:, H * hd:(H + KV) * hd].reshape(T, KV, hd)
        v = qkv[:, (H + KV) * hd:].reshape(T, KV, hd)
        if p.get("qk_norm"):  # Qwen3: every head normed, gains shared
            q = rmsnorm(q, gain(seed, b + 14, hd), eps)
            k = rmsnorm(k, gain(seed, b + 15, hd), eps)
        if not gpt2:
            q, k = rope(q, p["theta"]), rope(k, p["theta"])
        out = np.zeros((T, H, hd))
        for i in range(H):
            j = i // (H // KV)
            for t in range(T):
                s = k[:t + 1, j, :] @ q[t, i, :] / np.sqrt(hd)
                w = np.exp(s - s.max())
                out[t, i, :] = (w / w.sum()) @ v[:t + 1, j, :]
        att = out.reshape(T, H * hd) @ mat(seed, b + 4, H * hd, d)
        if p["o_bias"]:
            att = att + bias(seed, b + 5, d)
        x = x + att
        if gpt2:
            h = layernorm(x, gain(seed, b + 6, d), bias(seed, b + 7, d), eps)
        else:
            h = rmsnorm(x, gain(seed, b + 6, d), eps)
        up = h @ mat(seed, b + 8, d, F)
        if p["mlp_bias"]:
            up = up + bias(seed, b + 9, F)
        if gpt2:
            a = 0.5 * up * (1 + np.tanh(np.sqrt(2 / np.pi) *
                                        (up + 0.044715 * up ** 3)))
        else:
            g = h @ mat(seed, b + 10, d, F)
            if p["mlp_bias"]:
                g = g + bias(seed, b + 11, F)
            a = g / (1 + np.exp(-g)) * up
        down = a @ mat(seed, b + 12, F, d)
        if p["mlp_bias"]:
            down = down + bias(seed, b + 13, d)
        x = x + down
    last = x[-1]
    if gpt2:
        last = layernorm(last, gain(seed, 2, d), bias(seed, 3, d), eps)
    else:
        last = rmsnorm(last, gain(seed, 2, d), eps)
    head = wte.T if p["tied"] else mat(seed, 4, d, V)
    return last @ head


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    p, seqs, logits = {}, [], []
    for line in open(sys.argv[1]):
        f = line.split()
        if not f:
            continue
        if f[0] == "tokens":
            seqs.append([int(t) for t in f[1:]])
        elif f[0] == "logits":
            logits.append(np.array([float(v) for v in f[1:]]))
        elif f[0] in ("family",):
            p[f[0]] = f[1]
        elif f[0] == "weights":
            global WT
            WT = f[1]
        elif f[0] in ("eps", "theta"):
            p[f[0]] = float(f[1])
        else:
            p[f[0]] = int(f[1])
    tol = float(sys.argv[2])
    worst = 0.0
    for toks, got in zip(seqs, logits):
        want = forward(p, toks)
        worst = max(worst, float(np.abs(want - got).max()))
    print("ref_forward.py: %s, %d sequences, largest difference %.3g" %
          (p["family"], len(seqs), worst))
    return 0 if worst <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
