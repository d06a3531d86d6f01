#!/usr/bin/env python3
"""gguf_models.py - GGUF models that llama.cpp loads, for kvfit's checks.

Usage: gguf_models.py DIR [NAME...]
       gguf_models.py --list

Writes DIR/NAME.gguf for each model named (default: all), and --list
names them with what each is. Two kinds:

  tiny-*  small but complete: every tensor the architecture's loader asks
          for (src/models/<arch>.cpp of llama.cpp v0.5.0,
          load_arch_tensors), filled with seeded random f16 values (norms,
          biases and Mamba's A and D in f32), a few MB a file. llama.cpp
          loads and runs them.
  real-*  the shapes of published models (Llama 3.1 8B, Qwen3 30B-A3B,
          Gemma 3 27B, gpt-oss 20B): the same keys and tensor infos, but
          the data a hole (the file truncated to its size, sparse on
          disk), for llama.cpp's no_alloc estimate and kvfit, neither of
          which reads the data.

Every file carries a SentencePiece vocabulary (tokenizer.ggml.model
"llama": <unk> <s> </s>, the 256 byte tokens, pieces) with its scores and
token types. The tiny shapes exercise the KV rules: several K/V heads,
head sizes apart from hidden / heads, windows shorter than the contexts
asked for, sliding patterns, experts, Mamba layers beside attention.
Needs python3 alone (gguf_write.py beside it for the container).
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_write import ARR, F32, I32, STR, U32, Gguf  # noqa: E402


def tokenizer(g, n):
    """A SentencePiece vocabulary of n tokens: what llama-vocab.cpp needs
    of one (its newline is the byte token <0x0A>)."""
    toks = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [2, 3, 3] + [6] * 256  # UNKNOWN, CONTROL, BYTE
    letters = "abcdefghijklmnopqrstuvwxyz"
    pieces = ["\u2581"] + list(letters) + ["\u2581" + c for c in letters]
    pieces += ["\u2581" + a + b for a in letters for b in letters]
    k = len(toks)
    toks += pieces[:n - k]
    toks += ["\u2581t%d" % i for i in range(n - len(toks))]
    types += [1] * (n - len(types))  # NORMAL
    g.add("tokenizer.ggml.model", STR, "llama")
    g.add("tokenizer.ggml.tokens", ARR, (STR, toks))
    g.add("tokenizer.ggml.scores", ARR,
          (F32, [0.0] * k + [-float(i) for i in range(n - k)]))
    g.add("tokenizer.ggml.token_type", ARR, (I32, types))
    g.add("tokenizer.ggml.bos_token_id", U32, 1)
    g.add("tokenizer.ggml.eos_token_id", U32, 2)
    g.add("tokenizer.ggml.unknown_token_id", U32, 0)


class Model:
    """A GGUF being filled: keys of one architecture, then tensors, each
    of random values from one seeded pool (fast, the same bytes each run)
    or, header only, none."""

    POOL = None

    def __init__(self, arch, name, d):
        if Model.POOL is None:
            r = random.Random(1)
            vals = [r.uniform(-0.05, 0.05) for _ in range(1 << 16)]
            Model.POOL = (struct.pack("<%de" % len(vals), *vals),
                          struct.pack("<%df" % len(vals), *vals))
        self.g, self.d = Gguf(), d
        self.arch, self.at, self.data = arch, 0, not name.startswith("real")
        self.g.add("general.architecture", STR, arch)
        self.g.add("general.name", STR, name)
        self.g.add("general.file_type", U32, 1)  # mostly f16

    def key(self, k, t, v):
        self.g.add(self.arch + "." + k, t, v)

    def u32(self, **kv):
        for k, v in kv.items():
            self.key(k.replace("__", "."), U32, v)

    def heads(self, head=True, window=False):
        """The keys every attention model here gives."""
        d = self.d
        self.u32(block_count=d["layers"], context_length=d["ctx"],
                 embedding_length=d["embd"], feed_forward_length=d["ff"],
                 attention__head_count=d["heads"])
        if not isinstance(d["kv"], list):
            self.u32(attention__head_count_kv=d["kv"])
        if head:
            self.u32(attention__key_length=d["head"],
                     attention__value_length=d["head"],
                     rope__dimension_count=d["head"])
        if window:
            self.u32(attention__sliding_window=d["window"])
        self.key("rope.freq_base", F32, 10000.0)

    def t(self, name, *ne, f32=False):
        """A tensor: f16, or f32 (norms, biases, Mamba's A and D)."""
        if not self.data:
            self.g.tensor(name, list(ne), "F32" if f32 else "F16")
            return
        n = 1
        for x in ne:
            n *= x
        pool, elt = Model.POOL[1 if f32 else 0], 4 if f32 else 2
        size = n * elt
        start = self.at * elt % len(pool)  # whole values from the pool
        self.at += 4099  # another offset each time
        need = pool[start:] + pool * (size // len(pool) + 1)
        self.g.tensor(name, list(ne), "F32" if f32 else "F16", need[:size])

    def norm(self, name, n):
        self.t(name, n, f32=True)

    def attn(self, i, q, kv, qk_norm=0, bias_out=False):
        p, embd = "blk.%d." % i, self.d["embd"]
        self.t(p + "attn_q.weight", embd, q)
        self.t(p + "attn_k.weight", embd, kv)
        self.t(p + "attn_v.weight", embd, kv)
        self.t(p + "attn_output.weight", q, embd)
        if bias_out:
            self.norm(p + "attn_output.bias", embd)
        if qk_norm:
            self.norm(p + "attn_q_norm.weight", qk_norm)
            self.norm(p + "attn_k_norm.weight", qk_norm)

    def mlp(self, i, ff):
        p, embd = "blk.%d." % i, self.d["embd"]
        self.t(p + "ffn_gate.weight", embd, ff)
        self.t(p + "ffn_up.weight", embd, ff)
        self.t(p + "ffn_down.weight", ff, embd)

    def experts(self, i, ff, n, bias=False):
        p, embd = "blk.%d." % i, self.d["embd"]
        self.t(p + "ffn_gate_inp.weight", embd, n, f32=True)
        self.t(p + "ffn_gate_exps.weight", embd, ff, n)
        self.t(p + "ffn_up_exps.weight", embd, ff, n)
        self.t(p + "ffn_down_exps.weight", ff, embd, n)
        if bias:
            self.norm(p + "ffn_gate_inp.bias", n)
            self.t(p + "ffn_gate_exps.bias", ff, n, f32=True)
            self.t(p + "ffn_up_exps.bias", ff, n, f32=True)
            self.t(p + "ffn_down_exps.bias", embd, n, f32=True)

    def ends(self, output=True):
        embd, vocab = self.d["embd"], self.d["vocab"]
        self.t("token_embd.weight", embd, vocab)
        self.norm("output_norm.weight", embd)
        if output:
            self.t("output.weight", embd, vocab)

    def write(self, path):
        tokenizer(self.g, self.d["vocab"])
        if self.data:
            with open(path, "wb") as f:
                f.write(self.g.bytes())
            return
        head, size = self.g.header()
        head += b"\0" * ((-len(head)) % self.g.alignment)
        with open(path, "wb") as f:
            f.write(head)
            f.truncate(len(head) + size)  # a hole where the data goes
        if os.stat(path).st_blocks * 512 > len(head) + (1 << 20):
            os.remove(path)  # a file system that fills holes
            raise SystemExit("gguf_models.py: %s: no sparse files here" %
                             os.path.dirname(path))


def dense(name, d, arch, qk_norm=False):
    """llama and qwen3: full attention on every layer."""
    m = Model(arch, name, d)
    m.heads()
    m.key("attention.layer_norm_rms_epsilon", F32, 1e-6)
    m.ends()
    for i in range(d["layers"]):
        m.norm("blk.%d.attn_norm.weight" % i, d["embd"])
        m.attn(i, d["heads"] * d["head"], d["kv"] * d["head"],
               d["head"] if qk_norm else 0)
        m.norm("blk.%d.ffn_norm.weight" % i, d["embd"])
        m.mlp(i, d["ff"])
    return m


def llama(name, d):
    return dense(name, d, "llama")


def qwen3(name, d):
    return dense(name, d, "qwen3", qk_norm=True)


def qwen3moe(name, d):
    m = Model("qwen3moe", name, d)
    m.heads()
    m.u32(expert_count=d["experts"], expert_used_count=d["used"],
          expert_feed_forward_length=d["ff_exp"])
    m.key("attention.layer_norm_rms_epsilon", F32, 1e-6)
    m.ends()
    for i in range(d["layers"]):
        m.norm("blk.%d.attn_norm.weight" % i, d["embd"])
        m.attn(i, d["heads"] * d["head"], d["kv"] * d["head"], d["head"])
        m.norm("blk.%d.ffn_norm.weight" % i, d["embd"])
        m.experts(i, d["ff_exp"], d["experts"])
    return m


def gemma(name, d, arch):
    """Gemma 2 (sliding on every other layer) and Gemma 3 (five of six;
    q/k norms)."""
    m = Model(arch, name, d)
    m.heads(window=True)
    m.key("attention.layer_norm_rms_epsilon", F32, 1e-6)
    m.ends(output=False)
    for i in range(d["layers"]):
        p = "blk.%d." % i
        m.norm(p + "attn_norm.weight", d["embd"])
        m.attn(i, d["heads"] * d["head"], d["kv"] * d["head"],
               d["head"] if arch == "gemma3" else 0)
        m.norm(p + "post_attention_norm.weight", d["embd"])
        m.norm(p + "ffn_norm.weight", d["embd"])
        m.mlp(i, d["ff"])
        m.norm(p + "post_ffw_norm.weight", d["embd"])
    return m


def gemma2(name, d):
    return gemma(name, d, "gemma2")


def gemma3(name, d):
    return gemma(name, d, "gemma3")


def cohere2(name, d):
    """Command R7B: sliding on three layers of four; its attention is
    n_embd wide; LayerNorm without bias; logits scaled."""
    m = Model("cohere2", name, d)
    m.heads(head=False, window=True)
    m.u32(rope__dimension_count=d["embd"] // d["heads"])
    m.key("attention.layer_norm_epsilon", F32, 1e-5)
    m.key("logit_scale", F32, 0.25)
    m.ends(output=False)
    for i in range(d["layers"]):
        m.norm("blk.%d.attn_norm.weight" % i, d["embd"])
        m.attn(i, d["embd"], d["kv"] * (d["embd"] // d["heads"]))
        m.mlp(i, d["ff"])
    return m


def gpt_oss(name, d):
    """gpt-oss: sliding on every other layer; experts with biases;
    attention sinks."""
    m = Model("gpt-oss", name, d)
    m.heads(window=True)
    m.u32(expert_count=d["experts"], expert_used_count=d["used"],
          expert_feed_forward_length=d["ff_exp"])
    m.key("attention.layer_norm_rms_epsilon", F32, 1e-5)
    m.ends()
    for i in range(d["layers"]):
        p = "blk.%d." % i
        m.norm(p + "attn_norm.weight", d["embd"])
        m.norm(p + "post_attention_norm.weight", d["embd"])
        m.attn(i, d["heads"] * d["head"], d["kv"] * d["head"],
               bias_out=True)
        m.norm(p + "attn_sinks.weight", d["heads"])
        m.experts(i, d["ff_exp"], d["experts"], bias=True)
    return m


def jamba(name, d):
    """Jamba: head_count_kv 0 marks a Mamba layer (d_inner 2 x n_embd,
    the only expansion llama.cpp takes); experts on odd layers."""
    m = Model("jamba", name, d)
    embd, inner = d["embd"], 2 * d["embd"]
    state, conv, dt = d["state"], d["conv"], d["dt"]
    m.heads(head=False)
    m.key("attention.head_count_kv", ARR, (U32, d["kv"]))
    m.u32(ssm__conv_kernel=conv, ssm__inner_size=inner,
          ssm__state_size=state, ssm__time_step_rank=dt,
          expert_count=d["experts"], expert_used_count=d["used"])
    m.key("attention.layer_norm_rms_epsilon", F32, 1e-6)
    m.ends()
    for i, kv in enumerate(d["kv"]):
        p = "blk.%d." % i
        m.norm(p + "attn_norm.weight", embd)
        if kv == 0:
            m.t(p + "ssm_in.weight", embd, 2 * inner)
            m.t(p + "ssm_conv1d.weight", conv, inner, f32=True)
            m.norm(p + "ssm_conv1d.bias", inner)
            m.t(p + "ssm_x.weight", inner, dt + 2 * state)
            m.norm(p + "ssm_dt_norm.weight", dt)
            m.t(p + "ssm_dt.weight", dt, inner)
            m.norm(p + "ssm_dt.bias", inner)
            m.norm(p + "ssm_b_norm.weight", state)
            m.norm(p + "ssm_c_norm.weight", state)
            m.t(p + "ssm_a", state, inner, f32=True)
            m.norm(p + "ssm_d", inner)
            m.t(p + "ssm_out.weight", inner, embd)
        else:
            m.attn(i, embd, kv * (embd // d["heads"]))
        m.norm(p + "ffn_norm.weight", embd)
        if i % 2:
            m.experts(i, d["ff"], d["experts"])
        else:
            m.mlp(i, d["ff"])
    return m


def falcon_h1(name, d):
    """Falcon-H1: attention and Mamba-2 side by side on every layer."""
    m = Model("falcon-h1", name, d)
    embd, inner, state = d["embd"], d["inner"], d["state"]
    conv, sheads, groups = d["conv"], d["sheads"], d["groups"]
    m.heads()
    m.u32(ssm__conv_kernel=conv, ssm__inner_size=inner,
          ssm__state_size=state, ssm__time_step_rank=sheads,
          ssm__group_count=groups)
    m.key("attention.layer_norm_rms_epsilon", F32, 1e-5)
    m.ends()
    cdim = inner + 2 * groups * state
    for i in range(d["layers"]):
        p = "blk.%d." % i
        m.t(p + "ssm_in.weight", embd, inner + cdim + sheads)
        m.t(p + "ssm_conv1d.weight", conv, cdim, f32=True)
        m.norm(p + "ssm_conv1d.bias", cdim)
        m.norm(p + "ssm_dt.bias", sheads)
        m.t(p + "ssm_a", 1, sheads, f32=True)
        m.t(p + "ssm_d", 1, sheads, f32=True)
        m.t(p + "ssm_norm.weight", inner // groups, groups, f32=True)
        m.t(p + "ssm_out.weight", inner, embd)
        m.attn(i, d["heads"] * d["head"], d["kv"] * d["head"])
        m.norm(p + "attn_norm.weight", embd)
        m.norm(p + "ffn_norm", embd)
        m.mlp(i, d["ff"])
    return m


# name: (builder, dims, what it is)
MODELS = {
    "tiny-llama": (llama, dict(layers=4, embd=256, heads=8, kv=2, head=32,
                               ff=512, vocab=512, ctx=8192),
                   "Llama, GQA: 8 query heads of 32 over 2 K/V heads"),
    "tiny-qwen3": (qwen3, dict(layers=3, embd=256, heads=4, kv=4, head=128,
                               ff=512, vocab=512, ctx=8192),
                   "Qwen3: heads of 128 on a width of 256, q/k norms"),
    "tiny-qwen3moe": (qwen3moe, dict(layers=2, embd=256, heads=4, kv=2,
                                     head=64, ff=512, vocab=512, ctx=8192,
                                     experts=8, used=2, ff_exp=128),
                      "Qwen3 MoE: 8 experts of 128, 2 a token"),
    "tiny-gemma2": (gemma2, dict(layers=4, embd=192, heads=4, kv=2, head=64,
                                 ff=384, vocab=512, ctx=32768, window=1024),
                    "Gemma 2: window 1024 on every other layer"),
    "tiny-gemma3": (gemma3, dict(layers=6, embd=192, heads=4, kv=2, head=64,
                                 ff=384, vocab=512, ctx=32768, window=512),
                    "Gemma 3: window 512 on five layers of six"),
    "tiny-cohere2": (cohere2, dict(layers=4, embd=256, heads=4, kv=2,
                                   ff=512, vocab=512, ctx=8192, window=768),
                     "Command R7B: window 768 on three layers of four"),
    "tiny-gpt-oss": (gpt_oss, dict(layers=4, embd=256, heads=8, kv=2,
                                   head=32, ff=256, vocab=512, ctx=8192,
                                   window=128, experts=4, used=2,
                                   ff_exp=128),
                     "gpt-oss: window 128 on every other layer, experts"),
    "tiny-jamba": (jamba, dict(layers=4, embd=256, heads=8, kv=[0, 0, 4, 0],
                               ff=512, vocab=512, ctx=8192, state=16,
                               conv=4, dt=16, experts=4, used=2),
                   "Jamba: attention on one layer of four, Mamba beside"),
    "tiny-falcon-h1": (falcon_h1, dict(layers=3, embd=256, heads=4, kv=2,
                                       head=64, ff=512, vocab=512,
                                       ctx=8192, inner=256, state=16,
                                       conv=4, sheads=8, groups=1),
                       "Falcon-H1: attention and Mamba-2 on every layer"),
    "real-llama-3.1-8b": (llama, dict(layers=32, embd=4096, heads=32, kv=8,
                                      head=128, ff=14336, vocab=128256,
                                      ctx=131072),
                          "Llama 3.1 8B's shape, no data"),
    "real-qwen3-30b-a3b": (qwen3moe, dict(layers=48, embd=2048, heads=32,
                                          kv=4, head=128, ff=6144,
                                          vocab=151936, ctx=40960,
                                          experts=128, used=8, ff_exp=768),
                           "Qwen3 30B-A3B's shape, no data"),
    "real-gemma-3-27b": (gemma3, dict(layers=62, embd=5376, heads=32, kv=16,
                                      head=128, ff=21504, vocab=262208,
                                      ctx=131072, window=1024),
                         "Gemma 3 27B's shape, no data"),
    "real-gpt-oss-20b": (gpt_oss, dict(layers=24, embd=2880, heads=64, kv=8,
                                       head=64, ff=2880, vocab=201088,
                                       ctx=131072, window=128, experts=32,
                                       used=4, ff_exp=2880),
                         "gpt-oss 20B's shape, no data"),
}


def main(argv):
    if len(argv) == 2 and argv[1] == "--list":
        for n, (_, _, what) in MODELS.items():
            print("%s\t%s" % (n, what))
        return 0
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    names = argv[2:] or list(MODELS)
    for n in names:
        if n not in MODELS:
            print("gguf_models.py: no model %s" % n, file=sys.stderr)
            return 2
    os.makedirs(argv[1], exist_ok=True)
    for n in names:
        build, d, _ = MODELS[n]
        build(n, d).write(os.path.join(argv[1], n + ".gguf"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
