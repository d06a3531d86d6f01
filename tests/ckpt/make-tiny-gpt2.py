#!/usr/bin/env python3
"""make-tiny-gpt2.py - writes tests/ckpt/tiny-gpt2: a GPT-2 checkpoint as
Transformers saves one (config.json, model.safetensors with Conv1D
weights, bf16, and tokenizer.json), small enough to commit: 2 layers,
width 32, 4 heads, 32 positions, and a vocabulary of GPT-2's 256 byte
tokens and 64 merges learnt here from a line of English. Its values come
from a fixed xorshift, so the files are the same on every run. Python's
standard library only.
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny-gpt2")
D, H, L, P = 32, 4, 2, 32
MERGES = 64
V = 256 + MERGES
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


# the tokenizer: GPT-2's byte alphabet, then merges learnt greedily (the
# most frequent pair, ties to the first seen) from a line of text split as
# GPT-2 splits it (words with their leading space)
def byte_alphabet():
    bs = list(range(ord("!"), ord("~") + 1)) + \
        list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


ALPHA = byte_alphabet()
vocab = {ALPHA[b]: b for b in range(256)}
TEXT = ("the kv cache keeps the keys and the values of the tokens so that "
        "the next token reads them instead of computing them again and "
        "again: the cache is what makes decoding fast")
words = []
for i, w in enumerate(TEXT.split(" ")):
    w = (" " if i else "") + w
    words.append([ALPHA[b] for b in w.encode()])
merges = []
while len(merges) < MERGES:
    count, order = {}, []
    for w in words:
        for a, b in zip(w, w[1:]):
            if (a, b) not in count:
                order.append((a, b))
            count[(a, b)] = count.get((a, b), 0) + 1
    if not order:
        break
    best = max(order, key=lambda p: (count[p], -order.index(p)))
    merges.append(best[0] + " " + best[1])
    vocab[best[0] + best[1]] = 256 + len(merges) - 1
    for w in words:
        i = 0
        while i < len(w) - 1:
            if (w[i], w[i + 1]) == best:
                w[i:i + 2] = [best[0] + best[1]]
            i += 1
tok = {"version": "1.0", "added_tokens": [], "normalizer": None,
       "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                         "trim_offsets": True, "use_regex": True},
       "post_processor": None, "decoder": {"type": "ByteLevel"},
       "model": {"type": "BPE", "vocab": vocab, "merges": merges}}
with open(os.path.join(OUT, "tokenizer.json"), "w") as f:
    json.dump(tok, f, ensure_ascii=False)
    f.write("\n")
