#!/bin/sh
# readme.sh BUILD SRC: the README's examples, as printed.
#
# 1. Every indented block of README.md that opens with "$ COMMAND" shows
#    what the command prints on a terminal: the lines under a "$" line,
#    up to the next "$" line or the block's end. Each command that shows
#    output runs from the source top in a pseudo-terminal (util-linux
#    script), "build/" meaning BUILD's tools, and what the terminal shows
#    (stdout and stderr, a line's "\r" and "\033[K" applied, tabs at
#    their stops, no blanks at a line's end) must be the README's lines,
#    exactly; a line "..." alone matches any lines. A block after the line
#        <!-- measured: times vary; the rest is compared -->
#    is compared with every number that has a decimal point (and its
#    sign and exponent) read as one placeholder and runs of blanks read
#    as one: token ids, counts, bytes, sizes in units (71.75 KiB) and
#    words still exactly. A "$" line with no output under it is not run.
#    A command exits 0, or the status its comment names ("# exits 1").
# 2. Every other kvsize and kvfit example line runs too, for its exit
#    status alone. A snapshot folder under ~ is the reader's own; the
#    Hugging Face ids resolve in tests/hf-cache.
#
# Some of the commands run for seconds (kvdecode's prefix reuse, the
# uncached decode): a sanitizer or coverage build skips. Every run is on
# two CPUs where taskset can say so, as the README's machine has two.
bin=$(cd "$1" && pwd) || exit 1
cd "$2" || exit 1
src=$(pwd)
if grep -Eq '^KV_(SANITIZE|COVERAGE|FUZZ):BOOL=ON$' "$bin/CMakeCache.txt" 2>/dev/null; then
	echo "readme.sh: skipped: a sanitizer or coverage build runs the README's longer commands for minutes"
	exit 77
fi
if ! command -v script >/dev/null 2>&1 ||
	! script -q -e -c true /dev/null </dev/null >/dev/null 2>&1; then
	echo "readme.sh: skipped: no util-linux script(1) to run the commands on a terminal (Debian: bsdutils)"
	exit 77
fi
PATH=$bin:$PATH HF_HUB_CACHE=$src/tests/hf-cache KV_CONFIG_PATH=configs
SHELL=/bin/sh LC_ALL=C
# the scripts' own names for the build they use
KV_BUILD=$bin KV_BIN=$bin KVBENCH=$bin/kvbench KVSIZE=$bin/kvsize
export PATH HF_HUB_CACHE KV_CONFIG_PATH SHELL LC_ALL KV_BUILD KV_BIN KVBENCH KVSIZE
unset HF_HOME KV_MEM_AVAILABLE
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
pin=
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 2 ]; then
	cpus=$(taskset -pc $$ | sed 's/.*: //')
	pin="taskset -c $(echo "$cpus" | awk -F, '{
		for (i = 1; i <= NF && n < 2; i++) {
			split($i, r, "-"); hi = r[2] == "" ? r[1] : r[2]
			for (c = r[1]; c <= hi && n < 2; c++) s = s (n++ ? "," : "") c
		}
		print s }')"
fi

# 1. the commands that show their output, a case each: N.cmd, N.want,
# N.info ("LINE exact|measured")
awk -v dir="$tmp" '
function flush(   i, n) {
	if (cmd == "") return
	n = nout
	while (n > 0 && out[n] ~ /^[ \t]*$/) n--
	if (n > 0) {
		k++
		printf "%s\n", cmd > (dir "/" k ".cmd")
		for (i = 1; i <= n; i++) print out[i] > (dir "/" k ".want")
		print at, (measured ? "measured" : "exact") > (dir "/" k ".info")
		close(dir "/" k ".cmd"); close(dir "/" k ".want"); close(dir "/" k ".info")
	}
	cmd = ""; nout = 0
}
/^ *<!-- measured: times vary; the rest is compared -->$/ {
	if (inblock) { flush(); inblock = 0 }
	mark = 1; next
}
!inblock && match($0, /^    +\$ /) {
	inblock = 1; ind = RLENGTH - 2; measured = mark; mark = 0
}
inblock {
	if ($0 ~ /^[ \t]*$/) { if (cmd != "" && !cont) out[++nout] = ""; next }
	if (substr($0, 1, ind) !~ /^ *$/ || length($0) <= ind) {
		flush(); inblock = 0; measured = 0
	} else {
		line = substr($0, ind + 1)
		if (cont) { cmd = cmd "\n" line; cont = line ~ /\\$/; next }
		if (line ~ /^\$ /) {
			flush(); cmd = substr(line, 3); at = NR; cont = line ~ /\\$/
			next
		}
		out[++nout] = line
		next
	}
}
!inblock && $0 !~ /^[ \t]*$/ { mark = 0 }
END { flush() }' README.md

# what a terminal shows of FILE: "\r\n" a line end, then in each line
# "\r" back to its start and "\033[K" clearing the rest; tabs expanded
screen() {
	awk 'BEGIN { esc = sprintf("%c", 27); cr = sprintf("%c", 13) }
	{
		sub(cr "$", "")
		s = $0; o = ""; cur = 0
		while (s != "") {
			c = substr(s, 1, 1)
			if (c == cr) { cur = 0; s = substr(s, 2); continue }
			if (substr(s, 1, 3) == esc "[K") { o = substr(o, 1, cur); s = substr(s, 4); continue }
			if (c == esc) { s = substr(s, 2); continue }
			n = match(s, "[" cr esc "]"); run = n ? substr(s, 1, n - 1) : s
			s = n ? substr(s, n) : ""
			o = substr(o, 1, cur) run substr(o, cur + length(run) + 1)
			cur += length(run)
		}
		print o
	}' "$1" | expand | sed 's/[[:blank:]]*$//'
}
# a measured line as it is compared: a size (71.75 KiB) kept, every
# other number with a decimal point one "#", blanks one blank
mask() {
	sed -E -e 's/([0-9])\.([0-9]+ (B|KiB|MiB|GiB|TiB)([^[:alnum:]]|$))/\1@\2/g' \
		-e 's/[-+]?[0-9]*\.[0-9]+([eE][-+]?[0-9]+)?/#/g' \
		-e 's/([0-9])@([0-9])/\1.\2/g' \
		-e 's/[[:blank:]]+/ /g' -e 's/^ //' -e 's/ $//'
}
# matches WANT GOT: the lines of GOT are those of WANT, a "..." line of
# WANT standing for any lines
matches() {
	awk 'NR == FNR { w[++nw] = $0; next } { g[++ng] = $0 }
	END {
		# ok[i, j]: want lines i.. match got lines j..
		for (j = ng + 1; j >= 1; j--) ok[nw + 1, j] = j == ng + 1
		for (i = nw; i >= 1; i--)
			for (j = ng + 1; j >= 1; j--)
				if (w[i] == "...")
					ok[i, j] = ok[i + 1, j] || (j <= ng && ok[i, j + 1])
				else
					ok[i, j] = j <= ng && w[i] == g[j] && ok[i + 1, j + 1]
		exit !ok[1, 1]
	}' "$1" "$2"
}

bad=0 shown=0
k=1
while [ -f "$tmp/$k.cmd" ]; do
	read -r at how <"$tmp/$k.info"
	cmd=$(sed -E 's#(^|[[:space:]|;&(])build/#\1'"$bin"'/#g' "$tmp/$k.cmd")
	want=0
	case $(cat "$tmp/$k.cmd") in *'# exits '[0-9]*) want=$(sed -n 's/.*# exits \([0-9]*\).*/\1/p' "$tmp/$k.cmd") ;; esac
	$pin script -q -e -c "$cmd" /dev/null </dev/null >"$tmp/$k.raw" 2>&1
	got=$?
	screen "$tmp/$k.raw" >"$tmp/$k.got"
	if [ "$how" = measured ]; then
		mask <"$tmp/$k.want" >"$tmp/$k.w"
		mask <"$tmp/$k.got" >"$tmp/$k.g"
	else
		cp "$tmp/$k.want" "$tmp/$k.w"
		cp "$tmp/$k.got" "$tmp/$k.g"
	fi
	shown=$((shown + 1))
	if ! matches "$tmp/$k.w" "$tmp/$k.g" || [ "$got" != "$want" ]; then
		printf 'README.md:%s: $ %s\n' "$at" "$(cat "$tmp/$k.cmd")"
		[ "$got" = "$want" ] || echo "  exit $got, not $want"
		[ "$how" = measured ] && echo "  (measured: compared with numbers masked; the lines as shown, then as printed)"
		diff -u "$tmp/$k.want" "$tmp/$k.got" | sed -e 1,2d -e 's/^/  /'
		bad=$((bad + 1))
	fi
	k=$((k + 1))
done

# 2. the other kvsize and kvfit example lines: "    kvsize ...", for
# their exit status
ran=0 skipped=0
grep -E '^    (build/)?kv(size|fit) ' README.md | sed -e 's/^    //' >"$tmp/lines"
while IFS= read -r line; do
	case $line in
	*'~/'*)
		skipped=$((skipped + 1))
		echo "skipped (the reader's own folder): $line"
		continue ;;
	esac
	want=0
	case $line in
	*'# exits '[0-9]*)
		want=$(printf '%s\n' "$line" |
			sed -n 's/.*# exits \([0-9]*\).*/\1/p') ;;
	esac
	c=${line%%#*}
	sh -c "$c" >/dev/null 2>"$tmp/err" </dev/null
	got=$?
	ran=$((ran + 1))
	if [ "$got" != "$want" ]; then
		echo "exit $got, not $want: $line"
		sed 's/^/  /' "$tmp/err"
		bad=$((bad + 1))
	fi
done <"$tmp/lines"
echo "readme: $shown shown outputs compared; $ran more examples ran, $skipped skipped; $bad failed"
[ "$shown" -gt 10 ] && [ "$ran" -gt 10 ] && [ "$bad" = 0 ]
