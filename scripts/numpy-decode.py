#!/usr/bin/env python3
"""numpy-decode.py - the first article's approach, for comparison with
kvdecode: a GPT-2-small-shaped model with random float32 weights written
straightforwardly in NumPy, generating with and without a KV cache.

Usage: numpy-decode.py [--prompt N] [--new N] [--layers N] [--seed N]
                       [--cache on|both]
Prints per-token milliseconds each way (TSV: step ctx ms_cache ms_nocache
token_cache token_nocache max_abs_diff, like kvdecode) and a summary on
stderr. NumPy's BLAS threads follow OPENBLAS_NUM_THREADS. The weights are
not kvdecode's (np.random), only the shape and the work are the same.
"""
import argparse
import sys
import time

import numpy as np

D, H, F, V, P = 768, 12, 3072, 50257, 1024
HD = D // H


def build(layers, seed):
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02)

    model = {"wte": w(V, D), "wpe": w(P, D),
             "lnf": (np.ones(D, np.float32), np.zeros(D, np.float32)),
             "layers": []}
    for _ in range(layers):
        model["layers"].append({
            "ln1": (np.ones(D, np.float32), np.zeros(D, np.float32)),
            "qkv": w(D, 3 * D), "qkv_b": np.zeros(3 * D, np.float32),
            "o": w(D, D), "o_b": np.zeros(D, np.float32),
            "ln2": (np.ones(D, np.float32), np.zeros(D, np.float32)),
            "fc": w(D, F), "fc_b": np.zeros(F, np.float32),
            "proj": w(F, D), "proj_b": np.zeros(D, np.float32)})
    return model


def norm(x, gb):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * gb[0] + gb[1]


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def heads(m):
    """(T, D) -> (H, T, HD)"""
    return m.reshape(m.shape[0], H, HD).transpose(1, 0, 2)


def run(model, tokens, start, cache=None):
    """Logits of the last of `tokens`, which sit at positions start...;
    with a cache, K/V of the new tokens are written, then all are read."""
    t = len(tokens)
    x = model["wte"][tokens] + model["wpe"][start:start + t]
    mask = np.triu(np.full((t, start + t), -np.inf, np.float32), start + 1)
    for i, p in enumerate(model["layers"]):
        q, k, v = (heads(m) for m in np.split(
            norm(x, p["ln1"]) @ p["qkv"] + p["qkv_b"], 3, axis=1))
        if cache is not None:
            cache["K"][i, :, start:start + t] = k
            cache["V"][i, :, start:start + t] = v
            k = cache["K"][i, :, :start + t]
            v = cache["V"][i, :, :start + t]
        att = softmax(q @ k.transpose(0, 2, 1) / np.float32(HD ** 0.5)
                      + mask)
        o = (att @ v).transpose(1, 0, 2).reshape(t, D)
        x = x + o @ p["o"] + p["o_b"]
        x = x + gelu(norm(x, p["ln2"]) @ p["fc"] + p["fc_b"]) @ p["proj"] \
            + p["proj_b"]
    return norm(x[-1], model["lnf"]) @ model["wte"].T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new", type=int, default=32)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", choices=("on", "both"), default="both")
    a = ap.parse_args()
    model = build(a.layers, a.seed)
    rng = np.random.default_rng(a.seed + 1)
    prompt = list(rng.integers(0, V, a.prompt))
    ctx = a.prompt + a.new
    cache = {"K": np.zeros((a.layers, H, ctx, HD), np.float32),
             "V": np.zeros((a.layers, H, ctx, HD), np.float32)}
    tc, tn = list(prompt), list(prompt)
    total = [0.0, 0.0]
    worst = 0.0
    same = True
    print("step\tctx\tms_cache\tms_nocache\ttoken_cache\ttoken_nocache\t"
          "max_abs_diff")
    for step in range(1, a.new + 1):
        n = len(tc)
        t0 = time.perf_counter()
        if step == 1:
            lc = run(model, tc, 0, cache)
        else:
            lc = run(model, tc[-1:], n - 1, cache)
        t1 = time.perf_counter()
        ln = run(model, tn, 0) if a.cache == "both" else lc
        t2 = time.perf_counter()
        total[0] += t1 - t0
        total[1] += t2 - t1
        d = float(np.abs(lc - ln).max())
        worst = max(worst, d)
        a_, b_ = int(lc.argmax()), int(ln.argmax())
        same &= a_ == b_
        tc.append(a_)
        tn.append(b_)
        if a.cache == "both":
            print("%d\t%d\t%.3f\t%.3f\t%d\t%d\t%.9f" %
                  (step, n, (t1 - t0) * 1e3, (t2 - t1) * 1e3, a_, b_, d),
                  flush=True)
        else:
            print("%d\t%d\t%.3f\t\t%d\t\t" % (step, n, (t1 - t0) * 1e3, a_),
                  flush=True)
    per = 2 * a.layers * H * HD * cache["K"].itemsize
    print("numpy-decode.py: tokens %s; largest logit difference %.3g; "
          "%.3f s with the cache, %.3f s without: %.1fx; %d bytes per "
          "token" % ("identical" if same else "differ", worst, total[0],
                     total[1], total[1] / total[0], per), file=sys.stderr)
    if a.cache == "on":
        print("numpy-decode.py: (cache only: the comparison is with itself)",
              file=sys.stderr)


if __name__ == "__main__":
    main()
