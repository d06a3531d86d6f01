#!/bin/sh
# vs-node-llama-cpp.sh BUILD SRC: kvfit's llama.cpp rules against
# llama.cpp itself, the build the npm package node-llama-cpp ships (its
# prebuilt CPU libraries, @node-llama-cpp/linux-x64, in tests/npm/llama;
# scripts/bootstrap installs them). tests/scripts/gguf_models.py writes
# small complete GGUFs of nine architectures (Llama, Qwen3, Qwen3 MoE,
# Gemma 2 and 3, Command R7B, gpt-oss, Jamba, Falcon-H1) and the shapes of
# four published models without their data; vs-node-llama-cpp.mjs makes
# llama.cpp contexts of them at several contexts, sequences, n_ubatch and
# --swa-full, and holds kvfit --engine llamacpp to what llama.cpp logs:
# the KV and Mamba state bytes exactly, the compute buffer within its
# stated tolerance. Without node, python3 or the package (or off Linux
# x86-64, which the package is built for) the test says so on stderr and
# skips.
bin=$1 src=$2
dir=${KV_NPM_DIR:-$src/tests/npm}/llama
skip() {
	echo "vs-node-llama-cpp.sh: $*: skipped" >&2
	exit 77
}
[ -x "$bin/kvfit" ] || skip "no $bin/kvfit"
command -v node >/dev/null 2>&1 || skip "no node"
command -v python3 >/dev/null 2>&1 || skip "no python3"
[ "$(uname -sm)" = "Linux x86_64" ] || skip "node-llama-cpp's CPU build here is Linux x86-64's"
[ -f "$dir/node_modules/node-llama-cpp/package.json" ] &&
	[ -d "$dir/node_modules/@node-llama-cpp/linux-x64/bins" ] ||
	skip "node-llama-cpp is not installed in $dir (scripts/bootstrap installs it with npm)"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 "$src/tests/scripts/gguf_models.py" "$tmp" || exit 1
node "$src/tests/scripts/vs-node-llama-cpp.mjs" "$dir" "$bin/kvfit" "$tmp" \
	2>"$tmp/err" >"$tmp/out"
st=$?
cat "$tmp/out"
# llama.cpp's own lines go to node-llama-cpp's logger; what is left on
# stderr is node's
[ $st = 0 ] || { grep -v '^load_backend' "$tmp/err"; exit 1; }
