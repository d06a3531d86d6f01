#!/usr/bin/env python3
"""make-tiny-gpt2.py - writes tests/ckpt/tiny-gpt2: a GPT-2 checkpoint as
Transformers saves one (config.json, model.safetensors with Conv1D
weights, bf16), small enough to commit: 2 layers, width 32, 4 heads,
vocabulary 64, 32 positions. Its values come from a fixed xorshift, so
the files are the same on every run. Python's standard library only.
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny-gpt2")
D, H, L, V, P = 32, 4, 2, 64, 32
state = [88172645463325252]


def uniform(a):
    x = state[0]
    x ^= (x << 13) & (2 ** 64 - 1)
    x ^= x >> 7
    x ^= (x << 17) & (2 ** 64 - 1)
    state[0] = x
    return a * ((x >> 40) / 2 ** 23 - 1)


def bf16(v):
    """v rounded to bfloat16, nearest even, as its two bytes."""
    u = struct.unpack("<I", struct.pack("<f", v))[0]
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return struct.pack("<H", u)


tensors = []


def put(name, shape, gain=False, scale=0.2):
    n = 1
    for s in shape:
        n *= s
    data = b"".join(bf16(1 + uniform(0.1) if gain else uniform(scale))
                    for _ in range(n))
    tensors.append((name, shape, data))


put("wte.weight", [V, D], scale=0.5)
put("wpe.weight", [P, D], scale=0.1)
for i in range(L):
    p = "h.%d." % i
    put(p + "ln_1.weight", [D], gain=True)
    put(p + "ln_1.bias", [D], scale=0.02)
    put(p + "attn.c_attn.weight", [D, 3 * D])
    put(p + "attn.c_attn.bias", [3 * D], scale=0.02)
    put(p + "attn.c_proj.weight", [D, D])
    put(p + "attn.c_proj.bias", [D], scale=0.02)
    put(p + "ln_2.weight", [D], gain=True)
    put(p + "ln_2.bias", [D], scale=0.02)
    put(p + "mlp.c_fc.weight", [D, 4 * D])
    put(p + "mlp.c_fc.bias", [4 * D], scale=0.02)
    put(p + "mlp.c_proj.weight", [4 * D, D])
    put(p + "mlp.c_proj.bias", [D], scale=0.02)
put("ln_f.weight", [D], gain=True)
put("ln_f.bias", [D], scale=0.02)

header, at = {"__metadata__": {"format": "pt"}}, 0
for name, shape, data in tensors:
    header[name] = {"dtype": "BF16", "shape": shape,
                    "data_offsets": [at, at + len(data)]}
    at += len(data)
text = json.dumps(header, separators=(",", ":"))
text += " " * (-len(text) % 8)
os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text.encode())
    for _, _, data in tensors:
        f.write(data)
config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
          "n_layer": L, "n_embd": D, "n_head": H, "vocab_size": V,
          "n_positions": P, "n_ctx": P, "layer_norm_epsilon": 1e-5,
          "activation_function": "gelu_new", "torch_dtype": "bfloat16"}
with open(os.path.join(OUT, "config.json"), "w") as f:
    json.dump(config, f, indent=2)
    f.write("\n")
