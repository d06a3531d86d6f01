#!/bin/sh
# planner.sh BUILD SRC: the commands a planner types, as vLLM and
# llama.cpp users type them: a snapshot folder, a hub id from the offline
# cache, each engine flag name, the single-dash forms, each pipe, each
# output format and a bare size; each answer and exit status checked.
bin=$1 src=$2
cd "$src" || exit 1
PATH=$bin:$PATH KV_CONFIG_PATH=configs HF_HUB_CACHE=$src/tests/hf-cache LC_ALL=C
export PATH KV_CONFIG_PATH HF_HUB_CACHE LC_ALL
fail=0
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# expect STATUS PATTERN COMMAND...: the status, and PATTERN (grep -E) in
# its stdout and stderr together
expect() {
	want=$1 pat=$2
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" != "$want" ] || ! grep -Eq -- "$pat" "$tmp/out"; then
		echo "FAIL (exit $got, want $want; /$pat/): $*"
		sed 's/^/  /' "$tmp/out" | head -5
		fail=1
	fi
}
pipe() { sh -c "$1"; }
# a snapshot folder and a hub id
expect 0 "tiny" kvsize tests/ckpt/tiny --ctx 8k
expect 0 "Llama-3.1-8B.*131072" kvsize meta-llama/Llama-3.1-8B --ctx 8k
# vLLM's names
expect 0 "	2	2	1	vllm	vllm [0-9.]+	16	fp8	8192	" kvfit llama-3.1-8b --gpu h100-sxm \
	--tensor-parallel-size 2 --max-model-len 8k --kv-cache-dtype fp8 \
	--gpu-memory-utilization 0.9 --max-num-seqs 64 --max-num-batched-tokens 4096
expect 0 "	64	4096	" kvfit llama-3.1-8b --gpu h100-sxm --max-model-len 8k \
	--max-num-seqs 64 --max-num-batched-tokens 4096
expect 0 "kv_tokens" kvfit llama-3.1-8b --gpu h100-sxm --kv-cache-memory 60GiB --max-model-len 128k
# llama.cpp's names
expect 0 "llamacpp	llamacpp [a-z0-9]+	1	q8_0	8192	.*	4	512	4.00	4	" kvfit llama-3.1-8b --gpu h100-sxm --engine llamacpp \
	--ctx-size 32768 --cache-type-k q8_0 --cache-type-v q8_0 --parallel 4 --ubatch-size 512
expect 2 "kvtools has --tp" kvfit llama-3.1-8b --gpu h100 -tp 4
expect 2 "kvtools has --cache-type-k" kvfit llama-3.1-8b --gpu h100 -ctk q8_0
expect 2 "kvtools has --n-gpu-layers" kvsize llama-3.1-8b -ngl 99
# the same names in kvdecode and kvbench: K's and V's formats, contexts
expect 0 "^128	32	1	[0-9]+	[0-9]+	[0-9]+	19008	" kvdecode --dry-run -o tsv \
	--cache-type-k fp8 --cache-type-v int8
expect 0 "^attn	gpt2-small	64	1	12	q8_0	" kvbench -B attn --ctx-size 64 \
	--kv-cache-dtype q8_0 -R 1 --warmup 1 --kv-heads 12 -o tsv
expect 2 "kvbench keeps K and V in one format" kvbench \
	--cache-type-k q8_0 --cache-type-v q4_0
# pipes keep the plan
expect 0 "	4	4	1	vllm	" pipe "kvsize llama-3.1-70b --ctx 8k --tp 4 | kvfit --gpu h100 -"
expect 0 "	10	[0-9]+	[0-9]+	[0-9.]+	[0-9.]+	[0-9.]+	[0-9.]+	[0-9.]+$" pipe "kvsize llama-3.1-8b --users 10 --ctx 8k | kvfit --gpu h100 - | cut -f1-6,8-11,30,32-38"
expect 0 "^-	" pipe "cat configs/llama-3.1-8b.json | kvsize - | kvfit --gpu h100 - | tail -1"
expect 2 "kvsize's rows are for --tp 4, and kvfit was given --tp 2" pipe "kvsize llama-3.1-70b --ctx 8k --tp 4 | kvfit --gpu h100 --tp 2 -"
# sizes need units
expect 2 "80GB .* or 80GiB" kvfit llama-3.1-8b --gpu-mem 80
expect 0 "llama-3.1-8b" kvfit llama-3.1-8b --gpu-mem 80GB --ctx 8k
# every output format, the same columns
for f in tsv csv json md; do
	kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k -o $f >"$tmp/$f" || { echo "FAIL: -o $f"; fail=1; }
done
[ "$(head -1 "$tmp/tsv" | tr '\t' ',')" = "$(head -1 "$tmp/csv")" ] || { echo "FAIL: csv header"; fail=1; }
grep -q '^| model | gpu |' "$tmp/md" && grep -q '^|---|' "$tmp/md" || { echo "FAIL: md table"; fail=1; }
grep -q '"users_whole":' "$tmp/json" || { echo "FAIL: json"; fail=1; }
expect 2 "tsv, csv, json, md, table, vllm, sglang, llama-server or trtllm" kvfit llama-3.1-8b --gpu h100 -o xml
# a table for a person (a terminal's default): the answer's columns,
# aligned, sizes in units; every column with -v
expect 0 "^model +engine +gpus +kv_dtype +ctx +users_whole +bound +weights_bytes" kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k -o table
expect 0 "^llama-3.1-8b +vllm +1 +bf16 +8192 +56 +kv_memory +14.96 GiB" kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k -o table
expect 0 "compute_ms" kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k -o table -v
expect 0 "max_num_seqs$" pipe "kvfit llama-3.1-8b --gpu h100-sxm --ctx 1k --max-num-seqs 8 | cut -f1,27,39"
# a letter means one option everywhere
expect 2 "-b is --block-size" kvbench -b attn
expect 2 "-c is --ctx" kvdecode -c on
expect 2 "-g is --gpu \\(kvfit\\); kvdecode has no --gpu" kvdecode -g 3
[ $fail = 0 ] && echo "the planner's language: every command answered as typed"
exit $fail
