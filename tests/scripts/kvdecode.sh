#!/bin/sh
# kvdecode.sh BUILD SRC: what golden files cannot hold. --json is
# well-formed;
# --summary writes the columns scripts rely on, and the default shape's
# cache weighs 73,728 bytes per token measured from the allocation; the
# man page's examples run.
bin=$1/kvdecode src=$2
[ -x "$bin" ] || exit 77
bin=$(cd "$1" && pwd)/kvdecode
cd "$src" || exit 1
src=$(pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "kvdecode.sh: $*"; fail=1; }

# (that options, --help and the man page agree is tests/scripts/options.sh)

# the default shape, few tokens, a small vocabulary (bytes per token do
# not depend on it)
"$bin" --vocab 1000 --prompt 4 --new 2 --threads 2 \
	--summary "$tmp/sum" >/dev/null 2>"$tmp/err" || say "run failed"
head -1 "$tmp/sum" | tr '\t' '\n' >"$tmp/cols"
for c in tokens_identical max_abs_diff s_cache s_nocache speedup \
	kv_bytes_per_token kv_bytes passes_cache passes_nocache; do
	grep -qx "$c" "$tmp/cols" || say "summary lacks column $c"
done
per=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
	NR == 2 { print $c["kv_bytes_per_token"] }' "$tmp/sum")
[ "$per" = 73728 ] || say "kv_bytes_per_token is '$per', want 73728"
grep -q "73,728 bytes per token" "$tmp/err" || say "summary: no 73,728"
passes=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
	NR == 2 { print $c["passes_cache"], $c["passes_nocache"] }' "$tmp/sum")
[ "$passes" = "5 9" ] || say "passes are '$passes', want '5 9'"

# the man page's EXAMPLES run, made small by options appended (a later
# option wins): one layer, a small vocabulary, few tokens
sed -n '/^\.SH EXAMPLES/,/^\.SH SEE ALSO/p' man/kvdecode.1 |
	sed -n '/^\.nf/,/^\.fi/p' | grep -v '^\.[nf][fi]' |
	sed -e 's/\\-/-/g' -e 's/\\e$/\\/' >"$tmp/examples"
n=0
while IFS= read -r line; do
	while [ "${line%\\}" != "$line" ]; do # a continued line
		IFS= read -r more
		line="${line%\\} $more"
	done
	n=$((n + 1))
	(cd "$tmp" && PATH=$(dirname "$bin"):$PATH KV_CONFIG_PATH=$src/configs \
		sh -c "$line --layers 1 --vocab 1000 --prompt 4 --new 2" \
		>/dev/null 2>&1) || say "example fails: $line"
done <"$tmp/examples"
[ "$n" -ge 3 ] || say "found $n examples in the man page, want 3"

# --json parses, with null for the cells of a mode not run
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import json' 2>/dev/null; then
		"$bin" --vocab 1000 --layers 1 --prompt 3 --new 3 --json \
			--cache on --threads 1 2>/dev/null >"$tmp/json"
		"$py" -c '
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 3, rows
assert rows[0]["ms_nocache"] is None and rows[0]["ms_cache"] > 0
assert [r["step"] for r in rows] == [1, 2, 3]
' "$tmp/json" || say "--json output is not what it should be"
		break
	fi
done

# a closed pipe ends it quietly: no write error, nothing after the rows
"$bin" --vocab 256 --layers 1 --prompt 4 --new 200 --cache on --threads 1 \
	2>"$tmp/pipe.err" | head -2 >/dev/null
grep -q "write error" "$tmp/pipe.err" && say "closed pipe: $(cat "$tmp/pipe.err")"
exit $fail
