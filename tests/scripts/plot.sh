#!/bin/sh
# plot.sh BUILD SRC: the charts drawn from a saved kvbench run
# (tests/plot/run.tsv: attn, decode, nocache and batch at 256 and 1,024
# tokens, 12, 3 and 1 KV heads) say what they show: a line per context in
# plot-kvheads, per bench and KV heads in plot-steps (no zigzag through
# three head counts), per bench and bound in plot-efficiency, each named
# in words; time against the context on a log axis; efficiency with its
# line at 1.0; byte axes with SI prefixes; a selection that leaves no row
# is an error; a chart goes only where it is named. The predicted-against-
# measured chart is square, its axes of one range, its title the
# machine's. Checked on the gnuplot scripts (-f gp); rendered too where
# gnuplot is installed.
src=$2
cd "$src" || exit 1
top=$(pwd)
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
run=tests/plot/run.tsv
fail=0
check() { # FILE PATTERN COUNT: lines of FILE matching PATTERN
	n=$(grep -c -- "$2" "$1")
	[ "$n" = "$3" ] || { echo "$1: $n lines match '$2', not $3"; fail=1; }
}
titles() { grep '^plot ' "$1" | grep -o "title '[^']*'" | sort -u; }
sh scripts/plot-kvheads "$tmp/k.gp" "$run" 2>"$tmp/k.err" || { echo "plot-kvheads failed"; fail=1; }
# the rows it does not draw, said: 36 of the 42 (decode, nocache, batch)
grep -q "^plot: 36 rows left out by the selection (.*bench batch" "$tmp/k.err" ||
	{ echo "plot-kvheads: the rows left out not said"; cat "$tmp/k.err"; fail=1; }
check "$tmp/k.gp" "set xlabel 'KV heads'" 1
check "$tmp/k.gp" "set ylabel 'time per step, median (ms)'" 1
titles "$tmp/k.gp" >"$tmp/k.t"
printf "%s\n" "title '1,024 tokens, bytes read (right axis)'" \
	"title '1,024 tokens, time (left axis)'" \
	"title '256 tokens, bytes read (right axis)'" \
	"title '256 tokens, time (left axis)'" | diff - "$tmp/k.t" ||
	{ echo "plot-kvheads: not a line per context, named in words"; fail=1; }
check "$tmp/k.gp" "set format y2 '%.0s%c'" 1
check "$tmp/k.gp" "8,192" 0
sh scripts/plot-steps "$tmp/s.gp" "$run" 2>"$tmp/s.err" || { echo "plot-steps failed"; fail=1; }
[ "$(titles "$tmp/s.gp" | wc -l)" = 6 ] ||
	{ echo "plot-steps: not 6 lines (2 benches x 3 KV heads)"; titles "$tmp/s.gp"; fail=1; }
check "$tmp/s.gp" "title 'without the cache, 3 KV heads'" 1
check "$tmp/s.gp" "title 'with the KV cache, 1 KV head'" 1
# time against the context: both axes logarithmic, in plot-steps and in
# plot's default; -l none keeps them linear
check "$tmp/s.gp" "set logscale x 2" 1
check "$tmp/s.gp" "set logscale y" 1
sh scripts/plot-steps -l none "$tmp/s2.gp" "$run" 2>/dev/null
check "$tmp/s2.gp" "set logscale" 0
scripts/plot -f gp -s 'bench=decode|nocache' -s kv_heads=12 ctx ms_median bench <"$run" >"$tmp/p.gp" 2>/dev/null
check "$tmp/p.gp" "set logscale y" 1
check "$tmp/p.gp" "title 'with the KV cache', " 1
# a series column with one value on every line: in the title, not the key
check "$tmp/p.gp" "set title 'time per step, median (ms) by context (tokens)' " 1
scripts/plot -f gp -s 'bench=decode|nocache' -s kv_heads=12 ctx ms_median bench,kv_heads <"$run" >"$tmp/p.gp" 2>/dev/null
check "$tmp/p.gp" "set title '.*, 12 KV heads' " 1
check "$tmp/p.gp" "title 'without the cache'" 1
scripts/plot -f gp ctx efficiency bench <"$run" 2>/dev/null | grep -q "set logscale y" &&
	{ echo "plot: efficiency on a log axis"; fail=1; }
sh scripts/plot-efficiency "$tmp/e.gp" "$run" 2>"$tmp/e.err" || { echo "plot-efficiency failed"; fail=1; }
# no line of any chart zigzags through a column it does not name
for c in k s e; do
	[ -f "$tmp/$c.err" ] && grep "has two points" "$tmp/$c.err" && { echo "a chart zigzags"; fail=1; }
done
scripts/plot -f gp ctx ms_median bench <"$run" 2>&1 >/dev/null | grep -q 'the line "bench attn" has two points at ctx' ||
	{ echo "plot: a zigzag not said"; fail=1; }
# the bound on each line, or on all of them in the title
if ! grep -q "^set title '.*, bound by bandwidth'" "$tmp/e.gp"; then
	titles "$tmp/e.gp" | grep -v -e "bound by bandwidth'" -e "bound by the sgemm rate'" \
		-e "at the roofline" && { echo "plot-efficiency: a line without its bound"; fail=1; }
fi
check "$tmp/e.gp" "bandwidth roofline" 0
# the roofline, efficiency 1.0, drawn across the chart and named
check "$tmp/e.gp" "^set arrow from graph 0, first 1 to graph 1, first 1 nohead" 1
check "$tmp/e.gp" "NaN with lines .* title '1.0: at the roofline" 1
# a chart is written where it is named, never to the working folder
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && sh "$top/scripts/plot-efficiency" - "$top/$run" >"$tmp/e.out" 2>/dev/null)
[ -z "$(ls "$tmp/cwd")" ] || { echo "plot-efficiency: wrote into the working folder"; ls "$tmp/cwd"; fail=1; }
# a selection that leaves nothing, a column that is not there
scripts/plot -f gp -s bench=none ctx ms_median <"$run" >/dev/null 2>&1 &&
	{ echo "plot: an empty selection drew a chart"; fail=1; }
scripts/plot -f gp ctx nothing <"$run" 2>"$tmp/err" >/dev/null
grep -q "no column named nothing" "$tmp/err" || { echo "plot: no column not named"; fail=1; }
if command -v gnuplot >/dev/null 2>&1; then
	for c in kvheads steps efficiency; do
		sh "scripts/plot-$c" "$tmp/$c.png" "$run" 2>/dev/null && [ -s "$tmp/$c.png" ] ||
			{ echo "plot-$c: no PNG"; fail=1; }
	done
else
	echo "gnuplot not installed: charts checked as scripts only"
fi
# predicted against measured: a point per row, a series per bench; a
# table with no points is an error
if command -v gnuplot >/dev/null 2>&1; then
	sh scripts/plot-predict "$tmp/p.png" tests/plot/predict.tsv 2>"$tmp/p.err" &&
		[ -s "$tmp/p.png" ] || { echo "plot-predict failed:"; cat "$tmp/p.err"; fail=1; }
	# square, one range on both axes, the machine named in the title
	sh scripts/plot-predict -m "Test CPU 9000" "$tmp/p.gp" tests/plot/predict.tsv 2>/dev/null
	check "$tmp/p.gp" "^set title 'kvfit predicted against kvbench measured, on Test CPU 9000'" 1
	check "$tmp/p.gp" "^set size ratio -1" 1
	[ "$(sed -n 's/^set xrange //p' "$tmp/p.gp")" = "$(sed -n 's/^set yrange //p' "$tmp/p.gp")" ] ||
		{ echo "plot-predict: x and y of different ranges"; grep range "$tmp/p.gp"; fail=1; }
	check "$tmp/p.gp" "title 'step without the cache (a prefill)'" 1
	head -1 tests/plot/predict.tsv >"$tmp/empty.tsv"
	sh scripts/plot-predict "$tmp/e.png" "$tmp/empty.tsv" 2>"$tmp/e.err" &&
		{ echo "plot-predict drew an empty table"; fail=1; }
	grep -q "no points in" "$tmp/e.err" || { echo "plot-predict: no message for an empty table"; fail=1; }
fi
[ $fail = 0 ] && echo "charts say what they show"
exit $fail
