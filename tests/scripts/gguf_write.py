#!/usr/bin/env python3
"""gguf_write.py - GGUF files for kvtools' tests, without llama.cpp's gguf-py.

Usage: gguf_write.py CONFIG.json OUT.gguf [--tokens] [--old-mla]
       gguf_write.py --fixtures DIR

The first form writes the header of the GGUF that llama.cpp's converter
(convert_hf_to_gguf.py) makes of a Hugging Face config: general.architecture
and the <arch>.* keys its loader reads, no tensors. --tokens gives the
vocabulary as tokenizer.ggml.tokens (one string a token) instead of
<arch>.vocab_size; --old-mla writes DeepSeek's latent as GGUFs made before
llama.cpp's MLA cache did (key_length 192, no key_length_mla).

The second writes the files the golden cases read (tests/gguf/ and the bad
inputs of tests/bad/), byte for byte as they are committed:
tests/scripts/gguf.sh writes them again and compares.

The mapping here is written from the converter's side (a config's fields to
GGUF keys), the reverse of libkv's (gguf_cfg.c): each checks the other.
"""
import json
import os
import struct
import sys

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i",
          F32: "<f", BOOL: "<B", U64: "<Q", I64: "<q", F64: "<d"}

# ggml's type_traits: type number -> (values per block, bytes per block)
GGML = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18),
        "Q8_0": (8, 32, 34), "Q4_K": (12, 256, 144), "Q6_K": (14, 256, 210),
        "BF16": (30, 1, 2), "MXFP4": (39, 32, 17)}


def enc_str(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def enc_val(t, v):
    if t == STR:
        return enc_str(v)
    if t == ARR:
        elem, items = v
        out = struct.pack("<IQ", elem, len(items))
        return out + b"".join(enc_val(elem, x) for x in items)
    return struct.pack(SCALAR[t], v)


class Gguf:
    """A GGUF being written: keys in order, then tensors packed as ggml
    expects them (each at the next multiple of the alignment)."""

    def __init__(self, version=3, alignment=32):
        self.version, self.alignment = version, alignment
        self.kv, self.tensors = [], []
        self.data = {}  # a tensor's name -> its bytes (else zeros)

    def add(self, key, t, v):
        self.kv.append((key, t, v))
        return self

    def raw(self, key, blob):
        """A key whose type and value are given as bytes."""
        self.kv.append((key, None, blob))
        return self

    def tensor(self, name, ne, ggml, data=None):
        """A tensor of shape ne (ggml's order, fastest first); data, when
        given, its bytes (exactly its size), else zeros."""
        num, block, size = GGML[ggml]
        rows = 1
        for d in ne[1:]:
            rows *= d
        nbytes = ne[0] // block * size * rows
        if data is not None:
            assert len(data) == nbytes, name
            self.data[name] = data
        self.tensors.append((name, ne, num, nbytes))
        return self

    def header(self, n_tensors=None, n_kv=None):
        out = [b"GGUF" + struct.pack("<IQQ", self.version,
                                     len(self.tensors) if n_tensors is None
                                     else n_tensors,
                                     len(self.kv) if n_kv is None else n_kv)]
        for key, t, v in self.kv:
            out.append(enc_str(key))
            out.append(v if t is None else struct.pack("<I", t) +
                       enc_val(t, v))
        at = 0
        for name, ne, num, size in self.tensors:
            out.append(enc_str(name) + struct.pack("<I", len(ne)))
            out.append(b"".join(struct.pack("<Q", d) for d in ne))
            out.append(struct.pack("<IQ", num, at))
            at += size + (-size) % self.alignment
        return b"".join(out), at

    def bytes(self):
        head, data = self.header()
        head += b"\0" * ((-len(head)) % self.alignment)
        if not self.data:  # the data: zeros, each tensor padded
            return head + b"\0" * data
        out = [head]
        for name, _, _, size in self.tensors:
            out.append(self.data.get(name, b"\0" * size))
            out.append(b"\0" * ((-size) % self.alignment))
        return b"".join(out)


# The Transformers config classes' defaults, for the fields a published
# config leaves to them (the converter reads the config through them).
DEFAULTS = {
    "gemma3_text": {"vocab_size": 262208, "max_position_embeddings": 131072,
                    "num_attention_heads": 8, "num_key_value_heads": 4,
                    "head_dim": 256, "sliding_window": 4096},
    "falcon": {"max_position_embeddings": 2048},
    "gpt2": {"n_positions": 1024, "vocab_size": 50257},
    "mamba": {"vocab_size": 50280},
}

ARCH = {"llama": "llama", "mistral": "llama", "mixtral": "llama",
        "qwen2": "qwen2", "qwen2_moe": "qwen2moe", "qwen3": "qwen3",
        "qwen3_moe": "qwen3moe", "gemma": "gemma", "gemma2": "gemma2",
        "gemma3": "gemma3", "gemma3_text": "gemma3", "phi3": "phi3",
        "deepseek_v2": "deepseek2", "deepseek_v3": "deepseek2",
        "gpt_oss": "gpt-oss", "falcon": "falcon", "gpt2": "gpt2",
        "starcoder2": "starcoder2", "cohere": "command-r",
        "cohere2": "cohere2", "olmo2": "olmo2", "olmo3": "olmo2",
        "llama4": "llama4", "llama4_text": "llama4", "mamba": "mamba",
        "jamba": "jamba"}


def from_config(cfg, name, tokens=False, old_mla=False):
    """The GGUF header llama.cpp's converter writes for a config."""
    t = cfg.get("text_config") or cfg
    mt = t.get("model_type") or cfg.get("model_type")
    if mt == "gemma3" and t is not cfg:
        mt = "gemma3_text"
    if mt == "llama4_text":
        mt = "llama4"
    if mt is None and "ssm_cfg" in cfg:  # mamba_ssm's own config
        mt = "mamba"
    d = DEFAULTS.get(mt, {})

    def get(*names, default=None):
        for n in names:
            if t.get(n) is not None:
                return t[n]
        for n in names:
            if n in d:
                return d[n]
        return default

    arch = ARCH[mt]
    g = Gguf()
    g.add("general.architecture", STR, arch)
    g.add("general.name", STR, name)
    g.add("general.file_type", U32, 1)
    a = arch + "."
    layers = get("num_hidden_layers", "n_layer")
    hidden = get("hidden_size", "n_embd", "d_model")
    g.add(a + "block_count", U32, layers)
    g.add(a + "embedding_length", U32, hidden)
    vocab = get("vocab_size")
    if mt == "mamba":
        pad = get("pad_vocab_size_multiple", default=1)
        vocab = (vocab + pad - 1) // pad * pad
        g.add(a + "context_length", U32, 1 << 20)
        g.add(a + "feed_forward_length", U32, 0)
        g.add(a + "attention.head_count", U32, 0)
        g.add(a + "ssm.conv_kernel", U32, get("conv_kernel", default=4))
        g.add(a + "ssm.inner_size", U32,
              get("intermediate_size", default=2 * hidden))
        g.add(a + "ssm.state_size", U32, get("state_size", default=16))
        g.add(a + "ssm.time_step_rank", U32,
              get("time_step_rank", default=(hidden + 15) // 16))
        g.add(a + "attention.layer_norm_rms_epsilon", F32,
              get("layer_norm_epsilon", default=1e-5))
    else:
        heads = get("num_attention_heads", "n_head")
        kv = get("num_key_value_heads", default=heads)
        if mt == "falcon":
            kv = (get("num_kv_heads", default=heads)
                  if get("new_decoder_architecture") else
                  1 if get("multi_query", default=True) else heads)
        ffn = get("intermediate_size", "n_inner", default=4 * hidden)
        if mt == "llama4":
            ffn = get("intermediate_size_mlp")
        g.add(a + "context_length", U32,
              get("max_position_embeddings", "n_positions"))
        g.add(a + "feed_forward_length", U32, ffn)
        g.add(a + "attention.head_count", U32, heads)
        if mt == "jamba":  # 0: a Mamba layer, as llama.cpp marks them
            period = get("attn_layer_period", default=8)
            offset = get("attn_layer_offset", default=4)
            g.add(a + "attention.head_count_kv", ARR,
                  (U32, [kv if i % period == offset else 0
                         for i in range(layers)]))
            g.add(a + "ssm.conv_kernel", U32, get("mamba_d_conv", default=4))
            g.add(a + "ssm.inner_size", U32,
                  get("mamba_expand", default=2) * hidden)
            g.add(a + "ssm.state_size", U32, get("mamba_d_state", default=16))
            g.add(a + "ssm.time_step_rank", U32,
                  get("mamba_dt_rank", default=(hidden + 15) // 16))
            g.add(a + "expert_count", U32, get("num_experts", default=16))
            g.add(a + "expert_used_count", U32,
                  get("num_experts_per_tok", default=2))
        else:
            g.add(a + "attention.head_count_kv", U32,
                  1 if arch == "deepseek2" and not old_mla else kv)
        if get("rope_theta") is not None:
            g.add(a + "rope.freq_base", F32, float(get("rope_theta")))
        eps = get("rms_norm_eps")
        if eps is not None:
            g.add(a + "attention.layer_norm_rms_epsilon", F32, eps)
        if get("head_dim") is not None and arch != "deepseek2":
            g.add(a + "attention.key_length", U32, get("head_dim"))
            g.add(a + "attention.value_length", U32, get("head_dim"))
        window = get("sliding_window")
        if window is not None and (
                arch in ("gemma2", "gemma3", "cohere2", "gpt-oss", "phi3") or
                mt == "olmo3"):
            g.add(a + "attention.sliding_window", U32, window)
        if mt in ("mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss", "llama4"):
            g.add(a + "expert_count", U32,
                  get("num_local_experts", "num_experts"))
            g.add(a + "expert_used_count", U32,
                  get("num_experts_per_tok", "experts_per_token"))
        if mt in ("qwen2_moe", "qwen3_moe"):
            g.add(a + "expert_feed_forward_length", U32,
                  get("moe_intermediate_size"))
        if mt == "qwen2_moe":
            g.add(a + "expert_shared_feed_forward_length", U32,
                  get("shared_expert_intermediate_size"))
        if mt in ("gpt_oss", "llama4"):
            g.add(a + "expert_feed_forward_length", U32,
                  get("intermediate_size"))
        if mt == "llama4":
            g.add(a + "interleave_moe_layer_step", U32,
                  get("interleave_moe_layer_step", default=1))
        if arch == "deepseek2":
            rope, nope = get("qk_rope_head_dim"), get("qk_nope_head_dim")
            lora = get("kv_lora_rank")
            if get("q_lora_rank") is not None:
                g.add(a + "attention.q_lora_rank", U32, get("q_lora_rank"))
            g.add(a + "attention.kv_lora_rank", U32, lora)
            g.add(a + "rope.dimension_count", U32, rope)
            if old_mla:
                g.add(a + "attention.key_length", U32, nope + rope)
                g.add(a + "attention.value_length", U32, get("v_head_dim"))
            else:
                g.add(a + "attention.key_length", U32, lora + rope)
                g.add(a + "attention.value_length", U32, lora)
                g.add(a + "attention.key_length_mla", U32, nope + rope)
                g.add(a + "attention.value_length_mla", U32,
                      get("v_head_dim"))
            g.add(a + "leading_dense_block_count", U32,
                  get("first_k_dense_replace", default=0))
            g.add(a + "expert_count", U32, get("n_routed_experts"))
            g.add(a + "expert_used_count", U32, get("num_experts_per_tok"))
            g.add(a + "expert_shared_count", U32, get("n_shared_experts"))
            g.add(a + "expert_feed_forward_length", U32,
                  get("moe_intermediate_size"))
            g.add(a + "expert_gating_func", U32,
                  2 if get("scoring_func") == "sigmoid" else 1)
    if tokens:
        g.add("tokenizer.ggml.model", STR, "gpt2")
        g.add("tokenizer.ggml.tokens", ARR,
              (STR, ["t%d" % i for i in range(vocab)]))
    else:
        g.add(a + "vocab_size", U32, vocab)
    return g


def write(path, blob):
    with open(path, "wb") as f:
        f.write(blob)


def tiny():
    """A small Llama-shaped model with its tensors (zeros) in mixed
    formats, as a quantizer leaves a Q4_K_M file: hidden 256, 4 heads of 64
    (2 K/V heads), 2 layers, MLP 512, 256 tokens."""
    g = Gguf()
    a = "llama."
    g.add("general.architecture", STR, "llama")
    g.add("general.name", STR, "tiny")
    g.add("general.file_type", U32, 15)
    for k, v in (("block_count", 2), ("context_length", 4096),
                 ("embedding_length", 256), ("feed_forward_length", 512),
                 ("attention.head_count", 4), ("attention.head_count_kv", 2),
                 ("vocab_size", 256)):
        g.add(a + k, U32, v)
    g.add(a + "rope.freq_base", F32, 500000.0)
    g.add(a + "attention.layer_norm_rms_epsilon", F32, 1e-5)
    g.tensor("token_embd.weight", [256, 256], "Q4_K")
    for i in range(2):
        p = "blk.%d." % i
        g.tensor(p + "attn_norm.weight", [256], "F32")
        g.tensor(p + "attn_q.weight", [256, 256], "Q4_K")
        g.tensor(p + "attn_k.weight", [256, 128], "Q4_K")
        g.tensor(p + "attn_v.weight", [256, 128], "Q6_K")
        g.tensor(p + "attn_output.weight", [256, 256], "Q4_K")
        g.tensor(p + "ffn_norm.weight", [256], "F32")
        g.tensor(p + "ffn_gate.weight", [256, 512], "Q4_K")
        g.tensor(p + "ffn_up.weight", [256, 512], "Q4_K")
        g.tensor(p + "ffn_down.weight", [512, 256], "Q6_K")
    g.tensor("output_norm.weight", [256], "F32")
    g.tensor("output.weight", [256, 256], "Q6_K")
    return g


def tiny_moe():
    """A small Qwen3-MoE-shaped model with its tensors (zeros) in mixed
    formats: hidden 128, 2 heads of 64 (1 K/V head), 4 layers of 4
    experts of 128 (2 a token), 256 tokens. The experts of a layer are
    three 3-D tensors (gate, up, down), the names llama.cpp's --cpu-moe
    finds."""
    g = Gguf()
    a = "qwen3moe."
    g.add("general.architecture", STR, "qwen3moe")
    g.add("general.name", STR, "tiny-moe")
    g.add("general.file_type", U32, 2)
    for k, v in (("block_count", 4), ("context_length", 4096),
                 ("embedding_length", 128), ("feed_forward_length", 256),
                 ("attention.head_count", 2), ("attention.head_count_kv", 1),
                 ("attention.key_length", 64), ("attention.value_length", 64),
                 ("expert_count", 4), ("expert_used_count", 2),
                 ("expert_feed_forward_length", 128), ("vocab_size", 256)):
        g.add(a + k, U32, v)
    g.add(a + "rope.freq_base", F32, 1000000.0)
    g.add(a + "attention.layer_norm_rms_epsilon", F32, 1e-6)
    g.tensor("token_embd.weight", [128, 256], "Q4_0")
    for i in range(4):
        p = "blk.%d." % i
        g.tensor(p + "attn_norm.weight", [128], "F32")
        g.tensor(p + "attn_q.weight", [128, 128], "Q4_0")
        g.tensor(p + "attn_k.weight", [128, 64], "Q4_0")
        g.tensor(p + "attn_v.weight", [128, 64], "Q8_0")
        g.tensor(p + "attn_output.weight", [128, 128], "Q4_0")
        g.tensor(p + "attn_q_norm.weight", [64], "F32")
        g.tensor(p + "attn_k_norm.weight", [64], "F32")
        g.tensor(p + "ffn_norm.weight", [128], "F32")
        g.tensor(p + "ffn_gate_inp.weight", [128, 4], "F32")
        g.tensor(p + "ffn_gate_exps.weight", [128, 128, 4], "Q4_0")
        g.tensor(p + "ffn_up_exps.weight", [128, 128, 4], "Q4_0")
        g.tensor(p + "ffn_down_exps.weight", [128, 128, 4], "Q8_0")
    g.tensor("output_norm.weight", [128], "F32")
    g.tensor("output.weight", [128, 256], "Q8_0")
    return g


def replace(g, key, t, v):
    """g with key's type and value (t None: v the raw bytes) replaced."""
    i = [k for k, _, _ in g.kv].index(key)
    g.kv[i] = (key, t, v)
    return g


def fixtures(out):
    """The committed GGUFs: tests/gguf/ (good) and tests/bad/ (refused)."""
    good, bad = os.path.join(out, "gguf"), os.path.join(out, "bad")
    os.makedirs(good, exist_ok=True)
    os.makedirs(bad, exist_ok=True)
    write(os.path.join(good, "tiny-q4_k_m.gguf"), tiny().bytes())
    write(os.path.join(good, "tiny-moe.gguf"), tiny_moe().bytes())
    src = os.path.dirname(os.path.abspath(__file__)) + "/../.."
    for conf, name in (("configs/qwen3-30b-a3b.json", "qwen3-30b-a3b"),
                       ("tests/configs/gemma-2-2b-it.json", "gemma-2-2b-it")):
        with open(os.path.join(src, conf)) as f:
            g = from_config(json.load(f), name)
        write(os.path.join(good, name + ".gguf"), g.bytes())
    # a split of tiny in three parts, the second's tensors in part 2 ...
    t = tiny()
    parts = [t.tensors[:7], t.tensors[7:14], t.tensors[14:]]
    for i, ts in enumerate(parts):
        p = Gguf()
        if i == 0:
            p.kv = list(t.kv)
        p.add("split.no", U16, i).add("split.count", U16, 3)
        p.add("split.tensors.count", I32, len(t.tensors))
        p.tensors = ts
        blob = p.bytes()
        write(os.path.join(good, "tiny-%05d-of-00003.gguf" % (i + 1)), blob)
        if i != 1:  # ... and a split whose second part is missing
            p.tensors = []
            write(os.path.join(bad, "gguf-split-%05d-of-00003.gguf" %
                               (i + 1)), p.bytes())
    # the refused: each breaks one rule of the header (of tiny's keys,
    # without its tensors but where a rule is about them)
    def meta():
        g = tiny()
        g.tensors = []
        return g

    head, _ = meta().header()
    key = enc_str("llama.context_length")
    cut = head.index(key) + len(key) + 4 + 2  # two bytes into its value
    write(os.path.join(bad, "gguf-truncated.gguf"), head[:cut])
    g = replace(meta(), "general.name", None,
                struct.pack("<IQ", STR, 1 << 40) + b"tiny")
    write(os.path.join(bad, "gguf-string-past-end.gguf"), g.bytes())
    g = replace(meta(), "general.file_type", None,
                struct.pack("<II", 13, 15))
    write(os.path.join(bad, "gguf-unknown-type.gguf"), g.bytes())
    g = meta()
    g.kv.append(("tokenizer.ggml.merges", None,
                 struct.pack("<IIQ", ARR, ARR, 1)))
    write(os.path.join(bad, "gguf-nested-array.gguf"), g.bytes())
    g = meta()
    g.add("llama.block_count", U32, 2)
    write(os.path.join(bad, "gguf-duplicate-key.gguf"), g.bytes())
    head, _ = tiny().header()
    head += b"\0" * ((-len(head)) % 32)
    write(os.path.join(bad, "gguf-tensor-past-end.gguf"),
          head + b"\0" * 4096)
    g = replace(meta(), "llama.attention.head_count_kv", ARR,
                (F32, [2.0, 2.0]))
    write(os.path.join(bad, "gguf-kv-heads-float.gguf"), g.bytes())
    g = replace(meta(), "general.architecture", STR, "bert")
    write(os.path.join(bad, "gguf-arch-bert.gguf"), g.bytes())


def main(argv):
    if len(argv) == 3 and argv[1] == "--fixtures":
        fixtures(argv[2])
        return 0
    args = [x for x in argv[1:] if not x.startswith("--")]
    flags = {x for x in argv[1:] if x.startswith("--")}
    if len(args) != 2 or flags - {"--tokens", "--old-mla"}:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(args[0]) as f:
        cfg = json.load(f)
    name = os.path.basename(args[0])[:-5]
    g = from_config(cfg, name, "--tokens" in flags, "--old-mla" in flags)
    write(args[1], g.bytes())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
