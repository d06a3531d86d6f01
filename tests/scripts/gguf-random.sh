#!/bin/sh
# gguf-random.sh BUILD SRC: scripts/gguf-random.py writes what llama.cpp's
# gpt2 and llama loaders read, checked by reading the file back with
# gguf-py's own reader: the architecture and shape keys, every tensor by
# name with ggml's shape and type (matrices in the weight type, 1-D tensors
# f32; gpt2 without an output matrix, llama with one), the vocabulary
# (gpt2: 256 byte symbols, a merge per further token, <|endoftext|> last;
# llama: <unk> <s> </s>, 256 byte tokens, scored pieces) and shapes it
# refuses; and its --config-out config is the same model to kvtools: kvsize
# and kvfit --params read the same cache and parameters from both. Needs NumPy and
# llama.cpp's gguf-py, which no Debian package ships: set GGUF_PY to its
# folder (llama.cpp/gguf-py); without it the test says so and skips.
src=$2
[ -n "$GGUF_PY" ] && [ -f "$GGUF_PY/gguf/__init__.py" ] || {
	echo "gguf-random.sh: GGUF_PY is not llama.cpp's gguf-py folder: skipped"
	exit 77
}
py=
for p in python3 /usr/bin/python3; do
	$p -c 'import numpy' 2>/dev/null && { py=$p; break; }
done
[ -n "$py" ] || { echo "gguf-random.sh: no python3 with NumPy: skipped"; exit 77; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
export PYTHONPATH="$GGUF_PY"
fail=0
# the reader's checks of one file: check.py GGUF ARCH WEIGHTS
cat >"$tmp/check.py" <<'EOF'
import sys
import gguf

path, arch, w = sys.argv[1], sys.argv[2], sys.argv[3]
r = gguf.GGUFReader(path)
bad = []


def field(key):
    f = r.get_field(key)
    return None if f is None else f.contents()


if arch == "gpt2":
    want = {"general.architecture": "gpt2", "gpt2.block_count": 2,
            "gpt2.embedding_length": 64, "gpt2.feed_forward_length": 256,
            "gpt2.attention.head_count": 4, "gpt2.context_length": 96,
            "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2",
            "tokenizer.ggml.eos_token_id": 299}
    for k, v in want.items():
        if field(k) != v:
            bad.append("%s: %r, not %r" % (k, field(k), v))
    eps = field("gpt2.attention.layer_norm_epsilon")
    if eps is None or abs(eps - 1e-5) > 1e-9:
        bad.append("layer_norm_epsilon: %r" % eps)
    toks, merges = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.merges")
    types = field("tokenizer.ggml.token_type")
    if len(toks) != 300 or len(set(toks)) != 300 or toks[-1] != "<|endoftext|>":
        bad.append("tokens: %d, %d distinct, last %r" % (len(toks), len(set(toks)), toks[-1]))
    if len(merges) != 43 or toks[256] != "".join(merges[0].split(" ")):
        bad.append("merges: %d, first %r for %r" % (len(merges), merges[0], toks[256]))
    if types[-1] != 3 or set(types[:-1]) != {1}:
        bad.append("token types")

    mat = {"f32": "F32", "f16": "F16", "bf16": "BF16"}[w]
    D, F = 64, 256
    expect = {"token_embd.weight": ([D, 300], mat),
              "position_embd.weight": ([D, 96], mat),
              "output_norm.weight": ([D], "F32"), "output_norm.bias": ([D], "F32")}
    for i in range(2):
        p = "blk.%d." % i
        expect.update({
            p + "attn_norm.weight": ([D], "F32"), p + "attn_norm.bias": ([D], "F32"),
            p + "attn_qkv.weight": ([D, 3 * D], mat), p + "attn_qkv.bias": ([3 * D], "F32"),
            p + "attn_output.weight": ([D, D], mat), p + "attn_output.bias": ([D], "F32"),
            p + "ffn_norm.weight": ([D], "F32"), p + "ffn_norm.bias": ([D], "F32"),
            p + "ffn_up.weight": ([D, F], mat), p + "ffn_up.bias": ([F], "F32"),
            p + "ffn_down.weight": ([F, D], mat), p + "ffn_down.bias": ([D], "F32")})
    got = {t.name: ([int(x) for x in t.shape], t.tensor_type.name) for t in r.tensors}
    for name in sorted(set(expect) | set(got)):
        if expect.get(name) != got.get(name):
            bad.append("%s: %r, not %r" % (name, got.get(name), expect.get(name)))
else:
    want = {"general.architecture": "llama", "llama.block_count": 2,
            "llama.embedding_length": 64, "llama.feed_forward_length": 256,
            "llama.attention.head_count": 4, "llama.attention.head_count_kv": 2,
            "llama.context_length": 96, "llama.rope.dimension_count": 16,
            "llama.vocab_size": 300, "tokenizer.ggml.model": "llama",
            "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2}
    for k, v in want.items():
        if field(k) != v:
            bad.append("%s: %r, not %r" % (k, field(k), v))
    toks, types = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.token_type")
    scores = field("tokenizer.ggml.scores")
    if (len(toks) != 300 or len(set(toks)) != 300 or toks[:3] != ["<unk>", "<s>", "</s>"]
            or toks[3 + 0x41] != "<0x41>"):
        bad.append("tokens: %d, %d distinct, first %r" % (len(toks), len(set(toks)), toks[:4]))
    if types[:3] != [2, 3, 3] or set(types[3:259]) != {6} or set(types[259:]) != {1}:
        bad.append("token types")
    if len(scores) != 300 or scores[260] != -1.0:
        bad.append("scores")
    mat = {"f16": "F16", "bf16": "BF16"}[w]
    D, F, KV = 64, 256, 32
    expect = {"token_embd.weight": ([D, 300], mat), "output.weight": ([D, 300], mat),
              "output_norm.weight": ([D], "F32")}
    for i in range(2):
        p = "blk.%d." % i
        expect.update({
            p + "attn_norm.weight": ([D], "F32"), p + "ffn_norm.weight": ([D], "F32"),
            p + "attn_q.weight": ([D, D], mat), p + "attn_k.weight": ([D, KV], mat),
            p + "attn_v.weight": ([D, KV], mat), p + "attn_output.weight": ([D, D], mat),
            p + "ffn_gate.weight": ([D, F], mat), p + "ffn_up.weight": ([D, F], mat),
            p + "ffn_down.weight": ([F, D], mat)})
    got = {t.name: ([int(x) for x in t.shape], t.tensor_type.name) for t in r.tensors}
    for name in sorted(set(expect) | set(got)):
        if expect.get(name) != got.get(name):
            bad.append("%s: %r, not %r" % (name, got.get(name), expect.get(name)))
for b in bad:
    print("gguf-random.sh: %s %s: %s" % (arch, w, b))
sys.exit(1 if bad else 0)
EOF

shape="--layers 2 --width 64 --heads 4 --ff 256 --vocab 300 --positions 96"
for w in f32 f16 bf16; do
	$py "$src/scripts/gguf-random.py" --out "$tmp/$w.gguf" --weights-dtype $w \
		$shape 2>"$tmp/err" || { echo "write $w: $(cat "$tmp/err")"; fail=1; continue; }
	$py "$tmp/check.py" "$tmp/$w.gguf" gpt2 $w || fail=1
done

shape="--layers 2 --width 64 --heads 4 --kv-heads 2 --ff 256 --vocab 300 --positions 96"
for w in f16 bf16; do
	$py "$src/scripts/gguf-random.py" --arch llama --out "$tmp/l$w.gguf" \
		--config-out "$tmp/l$w.json" --weights-dtype $w $shape 2>"$tmp/err" ||
		{ echo "write llama $w: $(cat "$tmp/err")"; fail=1; continue; }
	$py "$tmp/check.py" "$tmp/l$w.gguf" llama $w || fail=1
	# the GGUF and the config are one model to kvtools: the same cache
	# (in f16: by default llama.cpp caches in f16, HF in torch_dtype),
	# and the same parameter count
	for f in gguf json; do
		"$1/kvsize" "$tmp/l$w.$f" -c 96 -t f16 -o tsv --no-header | cut -f2- >"$tmp/kv.$f"
		"$1/kvfit" "$tmp/l$w.$f" --params -o tsv --no-header | cut -f2,3 >"$tmp/p.$f"
	done
	cmp -s "$tmp/kv.gguf" "$tmp/kv.json" && [ -s "$tmp/kv.json" ] ||
		{ echo "llama $w: kvsize: GGUF $(cat "$tmp/kv.gguf"), config $(cat "$tmp/kv.json")"; fail=1; }
	cmp -s "$tmp/p.gguf" "$tmp/p.json" && [ "$(cat "$tmp/p.json")" = "161600	161600" ] ||
		{ echo "llama $w: params: GGUF $(cat "$tmp/p.gguf"), config $(cat "$tmp/p.json")"; fail=1; }
done

$py "$src/scripts/gguf-random.py" --out "$tmp/x.gguf" --width 64 --heads 5 \
	>/dev/null 2>"$tmp/err"
st=$?
[ $st = 2 ] && grep -q -- "--width 64: must be a multiple of --heads (5)" "$tmp/err" ||
	{ echo "width not a multiple of heads: exit $st: $(cat "$tmp/err")"; fail=1; }
[ ! -e "$tmp/x.gguf" ] || { echo "a refused shape left a file"; fail=1; }
$py "$src/scripts/gguf-random.py" --arch llama --out "$tmp/x.gguf" --heads 12 \
	--kv-heads 5 >/dev/null 2>"$tmp/err"
st=$?
[ $st = 2 ] && grep -q -- "--heads 12: must be a multiple of --kv-heads (5)" "$tmp/err" ||
	{ echo "heads not a multiple of kv-heads: exit $st: $(cat "$tmp/err")"; fail=1; }
$py "$src/scripts/gguf-random.py" --out "$tmp/x.gguf" --kv-heads 4 \
	>/dev/null 2>"$tmp/err"
st=$?
[ $st = 2 ] && grep -q -- "--kv-heads: gpt2 has as many as --heads" "$tmp/err" ||
	{ echo "gpt2 with --kv-heads: exit $st: $(cat "$tmp/err")"; fail=1; }
[ ! -e "$tmp/x.gguf" ] || { echo "a refused shape left a file"; fail=1; }
exit $fail
