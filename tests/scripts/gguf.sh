#!/bin/sh
# gguf.sh BUILD SRC: a GGUF is sized as the config it was converted from.
# For each pair, tests/scripts/gguf_write.py writes the header llama.cpp's
# converter makes of a shipped config (its keys, no tensors), and kvsize
# on the GGUF must print what kvsize on the config prints: every layer's
# kind, heads, head sizes, window and bytes, and the summary's bytes per
# token and per context (f16 both, the GGUF's default), at each context
# (a hybrid's Mamba state apart: float32 in llama.cpp).
# Where the config's reference keeps a window llama.cpp does not (Mistral
# 7B v0.1 converts as llama, Phi-3's window is off, StarCoder 2 sets none),
# the two agree up to the window and the GGUF keeps every token past it.
# Then the committed GGUFs (tests/gguf/, tests/bad/gguf-*) are written
# again and must be the same bytes. Needs python3 (no NumPy, no gguf-py).
bin=$1 src=$2
command -v python3 >/dev/null 2>&1 || { echo "gguf.sh: no python3: skipped"; exit 77; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
cd "$src" || exit 1
w=tests/scripts/gguf_write.py
fail=0 pairs=0

# CONFIG CONTEXTS [summary|nostate] [FLAGS]: the GGUF of CONFIG agrees at
# every context, layer by layer (summary: the summary alone, the layers'
# kinds differ; nostate: all but the Mamba layers' state, float32 in
# llama.cpp, the config's dtype in its reference)
agree() {
	cfg=$1 ctx=$2 hows="-c $ctx|--per-layer -c $ctx" cols=2-
	shift 2
	[ "$1" = summary ] && { hows="-c $ctx"; shift; }
	[ "$1" = nostate ] && { cols=2-11; shift; }
	g=$tmp/$(basename "$cfg" .json).gguf
	python3 $w "$cfg" "$g" "$@" 2>"$tmp/err" ||
		{ echo "gguf_write $cfg: $(cat "$tmp/err")"; fail=1; return; }
	IFS='|'
	for how in $hows; do
		IFS=' ' 
		"$bin/kvsize" -t f16 --no-header $how "$cfg" 2>/dev/null |
			cut -f$cols >"$tmp/want"
		"$bin/kvsize" -t f16 --no-header $how "$g" 2>"$tmp/err" |
			cut -f$cols >"$tmp/got"
		if ! [ -s "$tmp/want" ] || ! cmp -s "$tmp/want" "$tmp/got"; then
			echo "$cfg $*: kvsize $how differs on its GGUF:"
			cat "$tmp/err"
			diff "$tmp/want" "$tmp/got" | head -8
			fail=1
		fi
	done
	IFS=' '
	pairs=$((pairs + 1))
}

agree configs/llama-3.1-8b.json 1,8192,131072
agree configs/llama-3.1-8b.json 4096 --tokens
agree configs/llama-2-7b.json 1,4096
agree configs/mixtral-8x7b.json 1,32768
agree configs/qwen2.5-7b.json 1,32768
agree configs/qwen3-8b.json 1,40960
agree configs/qwen3-30b-a3b.json 1,32768
agree tests/configs/qwen1.5-moe-a2.7b.json 1,8192
agree tests/configs/gemma-2-2b-it.json 1,4096,8192
agree configs/gemma-2-9b.json 1,8192
agree configs/gemma-3-27b.json 1,1024,131072
agree tests/configs/gemma-3-1b-it.json 1,512,32768
agree configs/deepseek-v2-lite.json 1,163840
agree configs/deepseek-v2-lite.json 1,4096 --old-mla
agree configs/deepseek-v3.json 1,163840
agree configs/gpt-oss-20b.json 1,128,131072
agree tests/configs/gpt-oss-120b.json 1,131072
agree configs/falcon-7b.json 1,2048
agree configs/gpt2.json 1,1024
agree tests/configs/aya-23-8b.json 1,8192
agree tests/configs/olmo-3.1-32b-instruct.json 1,4096,65536
agree configs/llama-4-scout.json 1,8192,100000
agree tests/configs/mamba-2.8b.json 1,4096
agree configs/jamba-v0.1.json 1,8192,262144 nostate
agree tests/configs/jamba-1.5-mini.json 1,8192 nostate
agree tests/configs/phi-4.json 1,16384
agree configs/mistral-7b-v0.1.json 1,4096 summary
agree configs/phi-3-mini-4k.json 1,2047 summary
agree tests/configs/starcoder2-7b.json 1,4096 summary

# past the window the config's reference slides, llama.cpp keeps all:
# 32768 tokens of the GGUF cost 32768 times a token's bytes
for cfg in configs/mistral-7b-v0.1.json configs/phi-3-mini-4k.json \
	tests/configs/starcoder2-7b.json; do
	g=$tmp/$(basename "$cfg" .json).gguf
	"$bin/kvsize" -t f16 --no-header -c 32768 "$g" 2>/dev/null |
		awk -F'\t' -v c="$cfg" '$10 != $9 * 32768 {
			print c ": its GGUF keeps " $10 " bytes at 32768, not all " $9 * 32768; bad = 1 }
			END { exit bad }' || fail=1
	"$bin/kvsize" -t f16 --no-header -c 32768 "$cfg" 2>/dev/null |
		awk -F'\t' -v c="$cfg" '$10 >= $9 * 32768 {
			print c ": its config keeps every token past its window"; bad = 1 }
			END { exit bad }' || fail=1
done

# the committed GGUFs, written again
mkdir "$tmp/fx"
python3 $w --fixtures "$tmp/fx" || fail=1
for f in "$tmp"/fx/gguf/* "$tmp"/fx/bad/*; do
	d=$(basename "$(dirname "$f")")
	c=tests/$d/$(basename "$f")
	cmp -s "$f" "$c" || { echo "$c: not what gguf_write.py --fixtures writes"; fail=1; }
done
for c in tests/gguf/*.gguf tests/bad/gguf-*; do
	[ -e "$tmp/fx/${c#tests/}" ] || { echo "$c: gguf_write.py --fixtures no longer writes it"; fail=1; }
done
echo "gguf.sh: $pairs config/GGUF pairs compared"
exit $fail
