#!/usr/bin/env python3
"""make-tiny.py - writes the tiny checkpoints the tests keep, as
Transformers saves them (config.json, model.safetensors in bf16,
tokenizer.json), small enough to commit:

tests/ckpt/tiny-gpt2: GPT-2 (Conv1D weights), 2 layers, width 32, 4 heads,
32 positions.
tests/ckpt/tiny-qwen3: Qwen3 (Qwen3ForCausalLM's names: per-head q_norm and
k_norm, no q/k/v bias, tied head), 2 layers, width 32, 4 heads of 16 (not
32 / 4) over 2 K/V heads, MLP 64.
Both read a vocabulary of GPT-2's 256 byte tokens and 64 merges learnt here
from a line of English.
tests/ckpt/bad-qwen3-q-norm-missing and bad-qwen3-q-norm-shape: a one-layer
Qwen3 (width 8, 2 heads of 8) without layer 0's q_norm, and with one the
size of the whole projection (16, as OLMo 2 norms it) instead of a head's
(8): what the engine must refuse.

Each checkpoint's values come from a fixed xorshift, restarted for each,
so the files are the same on every run. Python's standard library only.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MERGES = 64
V = 256 + MERGES
state = [0]


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


class Checkpoint:
    """The tensors of one checkpoint, drawn in the order they are put."""

    def __init__(self, name):
        self.out = os.path.join(HERE, name)
        self.tensors = []
        state[0] = 88172645463325252

    def put(self, name, shape, gain=False, scale=0.2):
        n = 1
        for s in shape:
            n *= s
        data = b"".join(bf16(1 + uniform(scale) if gain else uniform(scale))
                        for _ in range(n))
        self.tensors.append((name, shape, data))

    def write(self, config, tokenizer=None):
        header, at = {"__metadata__": {"format": "pt"}}, 0
        for name, shape, data in self.tensors:
            header[name] = {"dtype": "BF16", "shape": shape,
                            "data_offsets": [at, at + len(data)]}
            at += len(data)
        text = json.dumps(header, separators=(",", ":"))
        text += " " * (-len(text) % 8)
        os.makedirs(self.out, exist_ok=True)
        with open(os.path.join(self.out, "model.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text.encode())
            for _, _, data in self.tensors:
                f.write(data)
        with open(os.path.join(self.out, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
        if tokenizer:
            with open(os.path.join(self.out, "tokenizer.json"), "w") as f:
                json.dump(tokenizer, f, ensure_ascii=False)
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


def tokenizer():
    alpha = byte_alphabet()
    vocab = {alpha[b]: b for b in range(256)}
    text = ("the kv cache keeps the keys and the values of the tokens so "
            "that the next token reads them instead of computing them again "
            "and again: the cache is what makes decoding fast")
    words = []
    for i, w in enumerate(text.split(" ")):
        w = (" " if i else "") + w
        words.append([alpha[b] for b in w.encode()])
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
    return {"version": "1.0", "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                              "trim_offsets": True, "use_regex": True},
            "post_processor": None, "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": vocab, "merges": merges}}


def gpt2(tok):
    d, h, layers, pos = 32, 4, 2, 32
    c = Checkpoint("tiny-gpt2")
    c.put("wte.weight", [V, d], scale=0.5)
    c.put("wpe.weight", [pos, d], scale=0.1)
    for i in range(layers):
        p = "h.%d." % i
        c.put(p + "ln_1.weight", [d], gain=True, scale=0.1)
        c.put(p + "ln_1.bias", [d], scale=0.02)
        c.put(p + "attn.c_attn.weight", [d, 3 * d])
        c.put(p + "attn.c_attn.bias", [3 * d], scale=0.02)
        c.put(p + "attn.c_proj.weight", [d, d])
        c.put(p + "attn.c_proj.bias", [d], scale=0.02)
        c.put(p + "ln_2.weight", [d], gain=True, scale=0.1)
        c.put(p + "ln_2.bias", [d], scale=0.02)
        c.put(p + "mlp.c_fc.weight", [d, 4 * d])
        c.put(p + "mlp.c_fc.bias", [4 * d], scale=0.02)
        c.put(p + "mlp.c_proj.weight", [4 * d, d])
        c.put(p + "mlp.c_proj.bias", [d], scale=0.02)
    c.put("ln_f.weight", [d], gain=True, scale=0.1)
    c.put("ln_f.bias", [d], scale=0.02)
    c.write({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
             "n_layer": layers, "n_embd": d, "n_head": h, "vocab_size": V,
             "n_positions": pos, "n_ctx": pos, "layer_norm_epsilon": 1e-5,
             "activation_function": "gelu_new", "torch_dtype": "bfloat16"},
            tok)


def qwen3(name, d, h, kv, hd, ffn, layers, vocab, q_norm=None, tok=None):
    """A Qwen3 checkpoint; q_norm: layer 0's q_norm shape, [] for none."""
    c = Checkpoint(name)
    c.put("model.embed_tokens.weight", [vocab, d], scale=0.5)
    for i in range(layers):
        p = "model.layers.%d." % i
        c.put(p + "input_layernorm.weight", [d], gain=True, scale=0.1)
        c.put(p + "self_attn.q_proj.weight", [h * hd, d])
        c.put(p + "self_attn.k_proj.weight", [kv * hd, d])
        c.put(p + "self_attn.v_proj.weight", [kv * hd, d])
        shape = q_norm if i == 0 and q_norm is not None else [hd]
        if shape:
            c.put(p + "self_attn.q_norm.weight", shape, gain=True,
                  scale=0.3)
        c.put(p + "self_attn.k_norm.weight", [hd], gain=True, scale=0.3)
        c.put(p + "self_attn.o_proj.weight", [d, h * hd])
        c.put(p + "post_attention_layernorm.weight", [d], gain=True,
              scale=0.1)
        c.put(p + "mlp.gate_proj.weight", [ffn, d])
        c.put(p + "mlp.up_proj.weight", [ffn, d])
        c.put(p + "mlp.down_proj.weight", [d, ffn])
    c.put("model.norm.weight", [d], gain=True, scale=0.1)
    c.write({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
             "attention_bias": False, "head_dim": hd, "hidden_act": "silu",
             "hidden_size": d, "intermediate_size": ffn,
             "max_position_embeddings": 256, "max_window_layers": layers,
             "num_attention_heads": h, "num_hidden_layers": layers,
             "num_key_value_heads": kv, "rms_norm_eps": 1e-6,
             "rope_scaling": None, "rope_theta": 1000000.0,
             "sliding_window": None, "tie_word_embeddings": True,
             "torch_dtype": "bfloat16", "use_sliding_window": False,
             "vocab_size": vocab}, tok)


TOK = tokenizer()
gpt2(TOK)
qwen3("tiny-qwen3", 32, 4, 2, 16, 64, 2, V, tok=TOK)
qwen3("bad-qwen3-q-norm-missing", 8, 2, 1, 8, 16, 1, 16, q_norm=[])
qwen3("bad-qwen3-q-norm-shape", 8, 2, 1, 8, 16, 1, 16, q_norm=[16])
