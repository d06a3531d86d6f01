#!/bin/sh
# kvfit-man.sh BINDIR SRCDIR: the options of kvfit's code, its --help and
# man/kvfit.1 agree, and every command of the man page's EXAMPLES runs
# (exit 0, or 1 for a --min-users gate) and prints rows.
bin=$1 src=$2
cd "$src" || exit 1
PATH=$bin:$PATH KV_CONFIG_PATH=$src/configs LC_ALL=C
export PATH KV_CONFIG_PATH LC_ALL
man=man/kvfit.1
help=$(kvfit --help) || { echo "kvfit --help failed"; exit 1; }
fail=0
opts=$(sed -n '/longopts\[\] = {/,/^};/p' src/kvfit.c |
	sed -n 's/^[^"]*{"\([a-z-]*\)".*/\1/p')
[ -n "$opts" ] || { echo "no options found in src/kvfit.c"; exit 1; }
for o in $opts; do
	case $help in
	*"--$o"*) ;;
	*) echo "--$o: not in --help"; fail=1 ;;
	esac
	esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
	grep -q -- "\\\\-\\\\-$esc" "$man" || { echo "--$o: not in $man"; fail=1; }
done
# the man page's EXAMPLES, one command a line
sed -n '/^\.SH EXAMPLES/,/^\.SH SEE ALSO/p' "$man" |
	grep -E '^(kvfit|kvsize) ' >"${TMPDIR:-/tmp}/kvfit-ex.$$"
n=0
while IFS= read -r cmd; do
	n=$((n + 1))
	out=$(sh -c "$cmd" 2>/dev/null </dev/null)
	s=$?
	if [ $s -gt 1 ] || [ -z "$out" ]; then
		echo "example failed ($s): $cmd"
		fail=1
	fi
done <"${TMPDIR:-/tmp}/kvfit-ex.$$"
rm -f "${TMPDIR:-/tmp}/kvfit-ex.$$"
[ $n -ge 5 ] || { echo "only $n examples found"; fail=1; }
exit $fail
