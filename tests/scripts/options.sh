#!/bin/sh
# options.sh BUILD SRC: for every tool built, the long options of its rows
# of the option table (src/options.c, as test_options prints them), of its
# --help and of its man page are the same set; each short letter of
# --help is in its man page; and a letter names the same long option in
# every tool (one vocabulary).
bin=$1 src=$2
command -v man >/dev/null 2>&1 || { echo "no man: skipped"; exit 77; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail=0 tools=0
for tool in kvsize kvfit kvdecode kvbench; do
	[ -x "$bin/$tool" ] || continue
	tools=$((tools + 1))
	others=$(echo kvsize kvfit kvdecode kvbench | tr ' ' '\n' | grep -vx "$tool" | paste -sd'|')
	# the table's rows for this tool
	"$bin/tests/test_options" names "$tool" | sort -u >"$tmp/code"
	"$bin/$tool" --help | grep -o -- '--[a-z0-9][a-z0-9_-]*' |
		sed 's/^--//' | sort -u >"$tmp/help"
	# (a word hyphenated at a line's end joined again; another tool's
	# option right after its name, "kvbench --profile", is that tool's)
	MANWIDTH=200 man -l "$src/man/$tool.1" 2>/dev/null | col -b |
		sed -e ':a' -e '/\(-\|‐\)$/{N;s/\(-\|‐\)\n[[:space:]]*//;ba' -e '}' |
		sed -E "s/\<($others)[[:space:]]+--[a-z0-9_-]+/ \1 /g" |
		grep -o -- '--[a-z0-9][a-z0-9_-]*' | sed 's/^--//' |
		sort -u >"$tmp/man"
	if ! [ -s "$tmp/code" ]; then
		echo "$tool: no options in the table"; fail=1
	fi
	for o in $(cat "$tmp/code"); do
		grep -qx -- "$o" "$tmp/help" || { echo "$tool: --$o not in --help"; fail=1; }
		grep -qx -- "$o" "$tmp/man" || { echo "$tool: --$o not in man/$tool.1"; fail=1; }
	done
	# the man page names no option the tool lacks, but the engines'
	# and benchmarks' flags it explains kvtools has no need of
	for o in $(cat "$tmp/man"); do
		case $o in dtype|quantization|n-gpu-layers|save-result|append-result|\
			output-file|report_json) continue ;; esac
		grep -qx -- "$o" "$tmp/code" || { echo "$tool: man/$tool.1 names --$o, which the tool lacks"; fail=1; }
	done
	for o in $(cat "$tmp/help"); do
		grep -qx -- "$o" "$tmp/code" || { echo "$tool: --help names --$o, which the tool lacks"; fail=1; }
	done
	# letters: "  -x, --name" lines of --help (the table's letters)
	"$bin/$tool" --help |
		sed -n 's/^  -\([A-Za-z]\), --\([a-z0-9-]*\).*/\1 \2/p' >"$tmp/letters.$tool"
	for l in $(cut -d' ' -f1 "$tmp/letters.$tool" | sort -u); do
		primary=
		for o in $(awk -v l="$l" '$1 == l { print $2 }' "$tmp/letters.$tool"); do
			"$bin/$tool" --help | grep -q -- "-$l, --$o " && primary=$o
		done
		if [ -z "$primary" ]; then
			echo "$tool: -$l not in --help beside its long option"; fail=1
			continue
		fi
		echo "$l $primary $tool" >>"$tmp/letters"
		MANWIDTH=200 man -l "$src/man/$tool.1" 2>/dev/null | col -b |
			grep -q -- "-$l, --$primary" || { echo "$tool: -$l, --$primary not in man/$tool.1"; fail=1; }
	done
done
# one letter, one option, in every tool
sort -u "$tmp/letters" | awk '{ if ($1 in name && name[$1] != $2) { print "-" $1 " is --" name[$1] " in " tool[$1] " but --" $2 " in " $3; bad = 1 } name[$1] = $2; tool[$1] = $3 } END { exit bad }' || fail=1
echo "$tools tools checked"
exit $fail
