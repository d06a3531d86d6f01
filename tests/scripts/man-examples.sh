#!/bin/sh
# man-examples.sh BUILD SRC: every command in the EXAMPLES of each man page
# runs and exits 0, or 1 for a gate (--min-users, --max-regress) that a
# machine or plan may miss, and prints something on stdout (output is not
# compared: the golden cases do that).
bin=$1 src=$2
command -v man >/dev/null 2>&1 || { echo "no man: skipped"; exit 77; }
cd "$src" || exit 1
export PATH="$bin:$PATH" KV_CONFIG_PATH="$src/configs"
fail=0 n=0
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# kvdecode and kvbench run for seconds to minutes at their examples' sizes:
# their own script tests run the examples shrunk
for page in man/kvsize.1 man/kvfit.1; do
	tool=$(basename "$page" .1)
	[ -x "$bin/$tool" ] || continue
	MANWIDTH=300 man -l "$page" 2>/dev/null | col -b |
		sed -n '/^EXAMPLES/,/^[A-Z]/p' | sed -e :a -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' |
		sed -n 's/^[[:space:]]*\(kv[a-z]* .*\)$/\1/p' >"$tmp/cmds" || true
	while IFS= read -r cmd; do
		case $cmd in "$tool "*|*"| kv"*) ;; *) continue ;; esac
		n=$((n + 1))
		sh -c "$cmd" >"$tmp/out" 2>"$tmp/err" </dev/null
		st=$?
		case $st:$cmd in
		0:* | 1:*--min-users* | 1:*--max-regress*) ;;
		*) echo "$page: exit $st: $cmd"; cat "$tmp/err"; fail=1 ;;
		esac
		[ -s "$tmp/out" ] || { echo "$page: no output: $cmd"; fail=1; }
	done <"$tmp/cmds"
done
echo "$n examples run"
[ $n -gt 0 ] || { echo "no examples found"; exit 1; }
exit $fail
