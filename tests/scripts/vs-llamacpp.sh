#!/bin/sh
# vs-llamacpp.sh BUILD SRC: scripts/vs-llamacpp without llama.cpp. Its
# refusals, each one line and exit 2 before anything runs: no llama-bench,
# a llama-bench path that is not one, no gguf-py, a folder that is not
# gguf-py, a cache format only one side stores, a bad count. Then its
# plumbing, with a stand-in llama-bench and kvbench that print fixed
# times (the GGUF already in --gguf-dir, so gguf-py is not needed): the
# options each receives, llama-bench's median per token, the table joined
# by weights, cache, context and threads, and a point llama-bench did not
# give (exit 1); the llama architecture run from the config beside its
# GGUF. gguf-random.py without gguf-py names it, exit 2.
src=$2
script=$src/scripts/vs-llamacpp
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "vs-llamacpp.sh: $*"; fail=1; }
# refuses ARGS... : exit 2 and the one line of stderr matching WANT (first)
refuses() {
	want=$1
	shift
	env -u LLAMA_BENCH -u GGUF_PY PATH=/usr/bin:/bin KV_BIN="${kvbin:-$tmp/kvbin}" \
		sh "$script" "$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	[ $st = 2 ] || say "$*: exit $st, not 2"
	[ ! -s "$tmp/out" ] || say "$*: stdout: $(cat "$tmp/out")"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "^vs-llamacpp: $want" "$tmp/err" ||
		say "$*: stderr not '$want': $(cat "$tmp/err")"
}

sh "$script" --help >"$tmp/out" 2>&1 || say "--help: exit $?"
grep -q '^vs-llamacpp \[--llama-bench PATH\]' "$tmp/out" || say "--help: $(head -2 "$tmp/out")"
grep -q -- '--gguf-py DIR' "$tmp/out" || say "--help does not name --gguf-py"
tail -n 1 "$tmp/out" | grep -q 'without them\.$' || say "--help cut short: $(tail -n 1 "$tmp/out")"

# the stand-ins: kvbench (columns out of order, read by name) and
# llama-bench (its JSON lines, repetitions out of order), each logging
# the options it was given; ms per step: kvtools ctx/64 + threads,
# llama.cpp ctx/32 + threads
mkdir -p "$tmp/kvbin" "$tmp/lb/build/bin" "$tmp/gguf" "$tmp/notgguf"
cat >"$tmp/kvbin/kvbench" <<'EOF'
#!/bin/sh
echo "$*" >>"$(dirname "$0")/args"
while [ $# -gt 0 ]; do
	case $1 in
	-c) c=$2 ;; -j) j=$2 ;; -t) t=$2 ;; --weights-dtype) w=$2 ;;
	esac
	shift
done
printf 'ms_median\tbench\tctx\tthreads\tkv_dtype\tweights_dtype\n'
for x in $(echo "$c" | tr , ' '); do
	for n in $(echo "$j" | tr , ' '); do
		printf '%s\tdecode\t%s\t%s\t%s\t%s\n' "$((x / 64 + n))" "$x" "$n" "$t" "$w"
	done
done
EOF
cat >"$tmp/lb/build/bin/llama-bench" <<'EOF'
#!/bin/sh
echo "$*" >>"$(dirname "$0")/args"
while [ $# -gt 0 ]; do
	case $1 in
	-d) d=$2 ;; -t) t=$2 ;; -ctk) k=$2 ;; -n) g=$2 ;;
	esac
	shift
done
for n in $(echo "$t" | tr , ' '); do
	[ "$d" = 999 ] && [ "$n" = 1 ] && continue
	ms=$((d / 32 + n))
	printf '{"build_commit": "abc1234", "build_number": 42, "n_threads": %s, "type_k": "%s", "type_v": "%s", "n_gen": %s, "n_depth": %s, "samples_ns": [ %s, %s, %s ],"samples_ts": [ 1, 2, 3 ]}\n' \
		"$n" "$k" "$k" "$g" "$d" "$(((ms + 7) * g * 1000000))" \
		"$((ms * g * 1000000))" "$(((ms - 1) * g * 1000000))"
done
EOF
chmod +x "$tmp/kvbin/kvbench" "$tmp/lb/build/bin/llama-bench"
lb=$tmp/lb/build/bin/llama-bench

if PATH=/usr/bin:/bin command -v llama-bench >/dev/null 2>&1; then
	echo "vs-llamacpp.sh: llama-bench in /usr/bin or /bin: its absence not checked"
else
	refuses "no llama-bench: give --llama-bench PATH or set LLAMA_BENCH"
fi
refuses "$tmp/none: no llama-bench there" --llama-bench "$tmp/none"
refuses "$tmp: no llama-bench there" --llama-bench "$tmp"
refuses "no gguf-py: give --gguf-py DIR" --llama-bench "$lb"
refuses "$tmp/notgguf: not llama.cpp's gguf-py" --llama-bench "$lb" --gguf-py "$tmp/notgguf"
refuses "no gguf-py" --llama-bench "$lb" --gguf-dir "$tmp/gguf" --weights-dtype f16
refuses "--kv-dtype: 'fp8' is not one of" -t f16,fp8
refuses "--kv-dtype: 'f16,,q4_0': an empty value" -t f16,,q4_0
refuses "--weights-dtype: 'q4_0' is not one of" --weights-dtype q4_0
refuses "--ctx: '8k': not a positive integer" -c 512,8k
refuses "--threads: '0': not a positive integer" -j 0
refuses "--reps: '': not a list" -R ''
refuses "option '-n' needs a value" -n
refuses "unknown option '--model'" --model gpt2
refuses "--arch: 'mistral' is not one of: gpt2 llama" --arch llama,mistral
kvbin=$tmp/none
refuses "no $tmp/none/kvbench; build first" --llama-bench "$lb"
kvbin=
[ "$(ls "$tmp/lb/build/bin")" = llama-bench ] || say "a refusal ran llama-bench"

# the plumbing: the GGUF's name carries its position table (512 + 16,
# rounded up to 1,024), so this one is reused and gguf-py is not needed
echo x >"$tmp/gguf/gpt2-f16-p1024.gguf"
KV_BIN=$tmp/kvbin LLAMA_BENCH=$lb sh "$script" --gguf-dir "$tmp/gguf" \
	--arch gpt2 --weights-dtype f16 -c 128,512 -j 1,2 -t q8_0,q4_0 -R 3 \
	>"$tmp/out" 2>"$tmp/err" ||
	say "run: exit $?: $(cat "$tmp/err")"
cat >"$tmp/want" <<'EOF'
arch	weights_dtype	kv_dtype	ctx	threads	kvtools_ms	llamacpp_ms	ratio
gpt2	f16	q8_0	128	1	3.000	5.000	0.600
gpt2	f16	q8_0	128	2	4.000	6.000	0.667
gpt2	f16	q8_0	512	1	9.000	17.000	0.529
gpt2	f16	q8_0	512	2	10.000	18.000	0.556
gpt2	f16	q4_0	128	1	3.000	5.000	0.600
gpt2	f16	q4_0	128	2	4.000	6.000	0.667
gpt2	f16	q4_0	512	1	9.000	17.000	0.529
gpt2	f16	q4_0	512	2	10.000	18.000	0.556
EOF
diff "$tmp/want" "$tmp/out" >"$tmp/diff" || say "table: $(cat "$tmp/diff")"
grep -q '"build_commit": "abc1234", "build_number": 42' "$tmp/err" ||
	say "the llama-bench build not named: $(tail -1 "$tmp/err")"
printf '%s\n' "gpt2 -B decode -c 128,512 -j 1,2 -t q8_0 --weights-dtype f16 -R 3 -o tsv" \
	"gpt2 -B decode -c 128,512 -j 1,2 -t q4_0 --weights-dtype f16 -R 3 -o tsv" |
	diff - "$tmp/kvbin/args" || say "kvbench's options"
g=$tmp/gguf/gpt2-f16-p1024.gguf
for k in q8_0 q4_0; do
	for c in 128 512; do
		echo "-m $g -p 0 -n 16 -r 3 -d $c -t 2,1 -ctk $k -ctv $k -fa 1 -o jsonl"
	done
done | diff - "$tmp/lb/build/bin/args" || say "llama-bench's options"

# the llama architecture: kvbench runs the config beside its GGUF
echo x >"$tmp/gguf/llama-bf16-p1024.gguf"
echo '{}' >"$tmp/gguf/llama-bf16-p1024.json"
rm -f "$tmp/kvbin/args" "$tmp/lb/build/bin/args"
KV_BIN=$tmp/kvbin LLAMA_BENCH=$lb sh "$script" --gguf-dir "$tmp/gguf" \
	--arch llama --weights-dtype bf16 -c 160 -j 2 -t f16 -R 3 \
	>"$tmp/out" 2>"$tmp/err" || say "llama run: exit $?: $(cat "$tmp/err")"
printf 'arch\tweights_dtype\tkv_dtype\tctx\tthreads\tkvtools_ms\tllamacpp_ms\tratio\nllama\tbf16\tf16\t160\t2\t4.000\t7.000\t0.571\n' |
	diff - "$tmp/out" >"$tmp/diff" || say "llama table: $(cat "$tmp/diff")"
echo "$tmp/gguf/llama-bf16-p1024.json -B decode -c 160 -j 2 -t f16 --weights-dtype bf16 -R 3 -o tsv" |
	diff - "$tmp/kvbin/args" || say "llama: kvbench's options"
echo "-m $tmp/gguf/llama-bf16-p1024.gguf -p 0 -n 16 -r 3 -d 160 -t 2 -ctk f16 -ctv f16 -fa 1 -o jsonl" |
	diff - "$tmp/lb/build/bin/args" || say "llama: llama-bench's options"

# a point llama-bench did not give: named, exit 1
KV_BIN=$tmp/kvbin LLAMA_BENCH=$lb sh "$script" --gguf-dir "$tmp/gguf" \
	--arch gpt2 --weights-dtype f16 -c 999 -t f16 >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st = 1 ] || say "a missing point: exit $st, not 1"
grep -q "^vs-llamacpp: llama-bench gave no point for gpt2, weights f16, cache f16, ctx 999, 1 threads$" "$tmp/err" ||
	say "a missing point not named: $(cat "$tmp/err")"

# the writer without gguf-py
py=
for p in python3 /usr/bin/python3; do
	$p -c 'import numpy' 2>/dev/null && { py=$p; break; }
done
if [ -n "$py" ]; then
	PYTHONPATH="" $py "$src/scripts/gguf-random.py" --out "$tmp/x.gguf" >"$tmp/out" 2>"$tmp/err"
	st=$?
	[ $st = 2 ] || say "gguf-random.py without gguf-py: exit $st, not 2"
	[ "$(cat "$tmp/err")" = "gguf-random.py: needs llama.cpp's gguf-py on PYTHONPATH" ] ||
		say "gguf-random.py without gguf-py: $(cat "$tmp/err")"
	[ ! -e "$tmp/x.gguf" ] || say "gguf-random.py without gguf-py wrote a file"
else
	echo "vs-llamacpp.sh: no python3 with NumPy: gguf-random.py's refusal not checked"
fi
exit $fail
