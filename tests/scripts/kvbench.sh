#!/bin/sh
# kvbench.sh BUILD SRC: every benchmark runs on a tiny shape and prints
# well-formed rows whose byte and FLOP counts are the hand-worked ones;
# JSON parses; a saved run replays as a baseline with a ratio per point.
# Times are never asserted.
bin=$1/kvbench src=$2
[ -x "$bin" ] || exit 77
cd "$src" || exit 1
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "kvbench.sh: $*"; fail=1; }
small="--layers 2 --vocab 256 --reps 2 --warmup 0 --membw-size 4MiB --sgemm-n 64 -j 1"

"$bin" $small --bench membw,sgemm,attn,decode,nocache,batch --ctx 64 \
	--users 1,2 >"$tmp/out" 2>"$tmp/err" || say "run failed: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && say "stderr not empty: $(cat "$tmp/err")"
want="bench	model	ctx	users	kv_heads	kv_dtype	threads	reps	bytes	flops	ms_median	ms_min	ms_max	gbps	gflops	roofline_ms	efficiency	kv_bytes	kv_share	kv_time_share	ref_gbps	ref_gflops	layout	block_size	new_tokens	top1_agree	max_abs_logit_diff	mean_abs_logit_diff	mean_kl	weights_dtype"
[ "$(head -1 "$tmp/out")" = "$want" ] || say "header: $(head -1 "$tmp/out")"
# every row: 30 cells, times positive, numbers where numbers belong
# (weights_dtype, the 30th, a name on the engine's rows)
awk -F'\t' 'NR > 1 {
	if (NF != 30) { print "row " NR ": " NF " cells"; bad = 1 }
	if ($30 != "" && $30 !~ /^(f32|bf16|f16)$/) { print "row " NR ": weights " $30; bad = 1 }
	if (!($11 > 0) || $12 > $11 || $11 > $13) { print "row " NR ": ms " $11 " " $12 " " $13; bad = 1 }
	for (i = 3; i <= 29; i++) if (i != 6 && i != 23)
		if ($i != "" && $i !~ /^[0-9]+(\.[0-9]+)?$/) { print "row " NR " col " i ": " $i; bad = 1 }
} END { exit bad }' "$tmp/out" || say "malformed rows"
row() { awk -F'\t' -v b="$1" -v c="$2" -v u="$3" -v h="$4" \
	'$1 == b && $3 == c && $4 == u && $5 == h' "$tmp/out"; }
field() { row "$1" "$2" "$3" "$4" | cut -f"$5"; }
# attn at 64 tokens, 2 layers, 12 query heads of 64: K and V, f32
[ "$(field attn 64 1 12 9)" = 786432 ] || say "attn 12 heads bytes: $(field attn 64 1 12 9)"
[ "$(field attn 64 1 3 9)" = 196608 ] || say "attn 3 heads bytes: $(field attn 64 1 3 9)"
[ "$(field attn 64 1 1 9)" = 65536 ] || say "attn 1 head bytes: $(field attn 64 1 1 9)"
[ "$(field attn 64 1 1 10)" = 393216 ] || say "attn flops: $(field attn 64 1 1 10)"
# decode, 2 users: 14,373,888 weight floats + two caches of 64 positions
[ "$(field decode 64 2 12 9)" = 59068416 ] || say "decode bytes: $(field decode 64 2 12 9)"
[ "$(field decode 64 2 12 18)" = 1572864 ] || say "decode kv_bytes: $(field decode 64 2 12 18)"
# nocache, 64 tokens: 2 x (7,077,888 x 64 x 2 layers + attention
# 2 x 12 x 64 x 2,080 x 2 layers + the head 768 x 256 for the last token)
[ "$(field nocache 64 1 12 10)" = 1825112064 ] || say "nocache flops: $(field nocache 64 1 12 10)"
[ -n "$(field batch 64 2 12 20)" ] || say "batch has no kv_time_share"
[ "$(awk -F'\t' '$1 == "membw"' "$tmp/out" | cut -f9)" = 4194304 ] || say "membw bytes"
[ "$(awk -F'\t' '$1 == "sgemm"' "$tmp/out" | cut -f10)" = 524288 ] || say "sgemm flops"
# attn over an fp8 and a q4_0 cache: 64 positions x 2 layers x 12 heads x
# K and V rows of 64 bytes, and of 36 (two blocks of 18)
"$bin" $small --bench attn --ctx 64 --kv-heads 12 --kv-dtype fp8,q4_0 >"$tmp/fmt" 2>"$tmp/err" || say "formats failed: $(cat "$tmp/err")"
[ "$(awk -F'\t' '$6 == "fp8"' "$tmp/fmt" | cut -f9)" = 196608 ] || say "fp8 bytes: $(cat "$tmp/fmt")"
[ "$(awk -F'\t' '$6 == "q4_0"' "$tmp/fmt" | cut -f9)" = 110592 ] || say "q4_0 bytes: $(cat "$tmp/fmt")"

# JSON parses and holds the same records
"$bin" $small --bench attn --ctx 32 --kv-heads 12 --json >"$tmp/json" 2>&1 || say "json run failed"
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r[0]["bench"]=="attn" and r[0]["bytes"]==393216, r' "$tmp/json" || say "json: $(cat "$tmp/json")"
fi

# latent attention beside the plain block: bytes of the latent (2 layers x
# (32 + 32 rotary) x 4 bytes x 32 positions), and a +mla row replays from
# a baseline with its rank
"$bin" $small --bench attn --ctx 32 --kv-heads 12 --mla off,32 >"$tmp/mbase" 2>/dev/null || say "mla run failed"
"$bin" --baseline "$tmp/mbase" --reps 1 --warmup 0 --layers 2 --vocab 256 --membw-size 4MiB >"$tmp/magain" 2>"$tmp/err" ||
	say "mla baseline run failed: $(cat "$tmp/err")"
[ "$(tail -n +2 "$tmp/magain" | cut -f2,5,9 | tr '\t\n' ', ')" = "gpt2-small,12,393216 gpt2-small+mla32,1,16384 " ] ||
	say "mla baseline rows: $(cat "$tmp/magain")"

# baseline: the saved points run again, each with its ratio
"$bin" $small --bench attn,membw --ctx 32 --kv-heads 12 >"$tmp/base" 2>/dev/null || say "base run failed"
"$bin" --baseline "$tmp/base" --reps 2 --warmup 0 --max-regress 1000 --layers 2 --vocab 256 --membw-size 4MiB >"$tmp/again" 2>"$tmp/err" ||
	say "baseline run failed: $(cat "$tmp/err")"
[ "$(head -1 "$tmp/again" | tr '\t' '\n' | tail -2 | tr '\n' ' ')" = "baseline_ms ratio " ] || say "baseline columns"
[ "$(wc -l <"$tmp/again")" = 3 ] || say "baseline rows: $(cat "$tmp/again")"
awk -F'\t' 'NR > 1 && !($31 > 0) { exit 1 }' "$tmp/again" || say "no ratio"

# layouts: the same bytes and FLOPs contiguous, in blocks and paged, a
# row per block size; a saved paged run replays paged
"$bin" $small --bench attn,decode,nocache --ctx 32 --kv-heads 12 \
	--layout contiguous,blocked,paged --block-size 8,32 >"$tmp/lay" 2>"$tmp/err" ||
	say "layout run failed: $(cat "$tmp/err")"
[ "$(cut -f1,23,24 "$tmp/lay" | tail -n +2 | tr '\t\n' ' |')" = \
	"attn contiguous |attn blocked 8|attn blocked 32|attn paged 8|attn paged 32|decode contiguous |decode blocked 8|decode blocked 32|decode paged 8|decode paged 32|nocache contiguous |" ] ||
	say "layout rows: $(cut -f1,23,24 "$tmp/lay")"
[ "$(awk -F'\t' '$1 == "attn" { print $9, $10 }' "$tmp/lay" | sort -u | wc -l)" = 1 ] ||
	say "attn bytes or FLOPs differ between layouts"
[ "$(awk -F'\t' '$1 == "decode" { print $9, $10 }' "$tmp/lay" | sort -u | wc -l)" = 1 ] ||
	say "decode bytes or FLOPs differ between layouts"
grep -v nocache "$tmp/lay" >"$tmp/laybase"
"$bin" --baseline "$tmp/laybase" --reps 1 --warmup 0 --layers 2 --vocab 256 --membw-size 4MiB >"$tmp/again" 2>"$tmp/err" ||
	say "layout baseline failed: $(cat "$tmp/err")"
[ "$(cut -f1,23,24 "$tmp/again")" = "$(cut -f1,23,24 "$tmp/laybase")" ] ||
	say "layout baseline rows: $(cut -f1,23,24 "$tmp/again")"
# a regression gate: a baseline 1000x faster than any machine fails, once
# re-measured
awk -F'\t' 'BEGIN { OFS = "\t" } NR > 1 { $11 = $11 / 1000 } 1' "$tmp/base" >"$tmp/fast"
"$bin" --baseline "$tmp/fast" --reps 1 --warmup 0 --max-regress 0.5 --layers 2 --vocab 256 --membw-size 4MiB >/dev/null 2>"$tmp/err"
[ $? = 1 ] || say "a regression did not exit 1"
grep -q "the baseline's" "$tmp/err" || say "no regression message: $(cat "$tmp/err")"

# 16-bit weights: a decode step at 64 tokens of 2 layers reads every
# weight, norms and biases too, in their type, and the cache. By hand:
# matrices 2 x (768 x 2304 + 768 x 768 + 2 x 768 x 3072) + 768 x 50257 =
# 52,753,152 values; vectors 2 x (4 x 768 + 2304 + 768 + 3072 + 768) +
# 2 x 768 = 21,504; cache 786,432 bytes. f32: 211,885,056; bf16 and
# f16: 2 x (52,753,152 + 21,504) + 786,432 = 106,335,744.
"$bin" -B decode --ctx 64 --layers 2 -j 1 --weights-dtype f32,bf16,f16 -R 1 \
	--warmup 0 -o tsv >"$tmp/w16" 2>/dev/null || say "weights-dtype run failed"
[ "$(cut -f9,30 "$tmp/w16" | tail -3 | tr '\t\n' ' ')" = \
	"211885056 f32 106335744 bf16 106335744 f16 " ] ||
	say "16-bit weights' bytes: $(cut -f9,30 "$tmp/w16" | tail -3 | tr '\n' ' ')"
# Ctrl-C: the rows already printed stay whole, the JSON closes, exit 130
for fmt in tsv json; do
	flag=
	[ $fmt = json ] && flag=--json
	: >"$tmp/int.$fmt"
	"$bin" --bench membw --membw-size 32MiB --reps 100 -j 1,1,1,1,1,1,1,1 $flag \
		>"$tmp/int.$fmt" 2>"$tmp/int.err" &
	pid=$!
	i=0
	while [ "$(grep -c membw "$tmp/int.$fmt" 2>/dev/null)" -lt 1 ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -INT $pid
	wait $pid
	st=$?
	[ $st = 130 ] || say "Ctrl-C ($fmt): exit $st"
	grep -q "interrupted; the rows printed are complete" "$tmp/int.err" ||
		say "Ctrl-C ($fmt): $(cat "$tmp/int.err")"
	rows=$(grep -c membw "$tmp/int.$fmt")
	[ "$rows" -ge 1 ] && [ "$rows" -lt 8 ] || say "Ctrl-C ($fmt): $rows rows"
	if [ $fmt = tsv ]; then
		awk -F'\t' 'NF != 30 { exit 1 }' "$tmp/int.tsv" || say "Ctrl-C: a partial row"
	elif [ -x /usr/bin/python3 ]; then
		/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/int.json" ||
			say "Ctrl-C: JSON not closed"
	fi
done

# a closed pipe ends it quietly
"$bin" $small --bench attn --ctx 16:4096:x2 2>"$tmp/err" | head -2 >/dev/null
[ -s "$tmp/err" ] && say "closed pipe: $(cat "$tmp/err")"
[ $fail = 0 ] && echo "kvbench rows, counts, JSON and baseline checked"
exit $fail
