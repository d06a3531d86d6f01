#!/bin/sh
# options.sh BUILD SRC: for every tool built, the long options of its
# getopt table, of its --help and of its man page are the same set.
bin=$1 src=$2
command -v man >/dev/null 2>&1 || { echo "no man: skipped"; exit 77; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail=0 tools=0
for tool in kvsize kvfit kvdecode kvbench; do
	[ -x "$bin/$tool" ] || continue
	tools=$((tools + 1))
	# the table: {"name", ... } entries of the struct option array
	sed -n '/struct option/,/^};/p' "$src/src/$tool.c" |
		grep -o '{"[a-z0-9-]*"' | tr -d '{"' | sort -u >"$tmp/code"
	"$bin/$tool" --help | grep -o -- '--[a-z0-9][a-z0-9-]*' |
		sed 's/^--//' | sort -u >"$tmp/help"
	MANWIDTH=200 man -l "$src/man/$tool.1" 2>/dev/null | col -b |
		grep -o -- '--[a-z0-9][a-z0-9-]*' | sed 's/^--//' |
		sort -u >"$tmp/man"
	if ! [ -s "$tmp/code" ]; then
		echo "$tool: no options found in src/$tool.c"; fail=1
	fi
	for o in $(cat "$tmp/code"); do
		grep -qx -- "$o" "$tmp/help" || { echo "$tool: --$o not in --help"; fail=1; }
		grep -qx -- "$o" "$tmp/man" || { echo "$tool: --$o not in man/$tool.1"; fail=1; }
	done
	for o in $(cat "$tmp/help"); do
		grep -qx -- "$o" "$tmp/code" || { echo "$tool: --help names --$o, which the tool lacks"; fail=1; }
	done
done
echo "$tools tools checked"
exit $fail
