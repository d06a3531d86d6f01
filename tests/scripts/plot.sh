#!/bin/sh
# plot.sh BUILD SRC: the charts drawn from a saved kvbench run
# (tests/plot/run.tsv: attn, decode, nocache and batch at 256 and 1,024
# tokens, 12, 3 and 1 KV heads) say what they show: a line per context in
# plot-kvheads, per bench and KV heads in plot-steps (no zigzag through
# three head counts), per bench and bound in plot-efficiency; byte axes
# with SI prefixes; a selection that leaves no row is an error. Checked
# on the gnuplot scripts (-f gp); rendered too where gnuplot is installed.
src=$2
cd "$src" || exit 1
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
printf "%s\n" "title 'ctx 1024, bytes'" "title 'ctx 1024, ms_median'" \
	"title 'ctx 256, bytes'" "title 'ctx 256, ms_median'" | diff - "$tmp/k.t" ||
	{ echo "plot-kvheads: not a line per context"; fail=1; }
check "$tmp/k.gp" "set format y2 '%.0s%c'" 1
check "$tmp/k.gp" "8,192" 0
sh scripts/plot-steps "$tmp/s.gp" "$run" 2>"$tmp/s.err" || { echo "plot-steps failed"; fail=1; }
[ "$(titles "$tmp/s.gp" | wc -l)" = 6 ] ||
	{ echo "plot-steps: not 6 lines (2 benches x 3 KV heads)"; titles "$tmp/s.gp"; fail=1; }
check "$tmp/s.gp" "bench nocache kv_heads 3" 1
sh scripts/plot-efficiency "$tmp/e.gp" "$run" 2>"$tmp/e.err" || { echo "plot-efficiency failed"; fail=1; }
# no line of any chart zigzags through a column it does not name
for c in k s e; do
	[ -f "$tmp/$c.err" ] && grep "has two points" "$tmp/$c.err" && { echo "a chart zigzags"; fail=1; }
done
scripts/plot -f gp ctx ms_median bench <"$run" 2>&1 >/dev/null | grep -q 'the line "bench attn" has two points at ctx' ||
	{ echo "plot: a zigzag not said"; fail=1; }
titles "$tmp/e.gp" | grep -v -e "bound bandwidth'" -e "bound sgemm'" &&
	{ echo "plot-efficiency: a line without its bound"; fail=1; }
check "$tmp/e.gp" "bandwidth roofline" 0
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
	head -1 tests/plot/predict.tsv >"$tmp/empty.tsv"
	sh scripts/plot-predict "$tmp/e.png" "$tmp/empty.tsv" 2>"$tmp/e.err" &&
		{ echo "plot-predict drew an empty table"; fail=1; }
	grep -q "no points in" "$tmp/e.err" || { echo "plot-predict: no message for an empty table"; fail=1; }
fi
[ $fail = 0 ] && echo "charts say what they show"
exit $fail
