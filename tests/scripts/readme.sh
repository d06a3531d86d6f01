#!/bin/sh
# readme.sh BUILD SRC: every kvsize and kvfit example of the README runs as
# printed, with the tools on PATH as the README says to put them: exit 0,
# or the status its comment names ("# exits 1"). A snapshot folder under ~
# is the reader's own; the Hugging Face ids resolve in tests/hf-cache.
# kvdecode and kvbench examples run for seconds to minutes: their golden
# cases and scripts cover them.
bin=$1 src=$2
cd "$src" || exit 1
PATH=$bin:$PATH HF_HUB_CACHE=$src/tests/hf-cache KV_CONFIG_PATH=configs
export PATH HF_HUB_CACHE KV_CONFIG_PATH
bad=0 ran=0 skipped=0
# the indented command lines of the README: "    kvsize ...", "    $ build/kvfit ..."
grep -E '^    (\$ )?(build/)?kv(size|fit) ' README.md | sed -e 's/^    //' -e 's/^\$ //' >"${TMPDIR:-/tmp}/readme.$$"
while IFS= read -r line; do
	case $line in
	*'~/'*)
		skipped=$((skipped + 1))
		echo "skipped (the reader's own folder): $line"
		continue ;;
	esac
	want=0
	case $line in
	*'# exits 1'*) want=1 ;;
	esac
	cmd=${line%%#*}
	sh -c "$cmd" >/dev/null 2>"${TMPDIR:-/tmp}/readme-err.$$" </dev/null
	got=$?
	ran=$((ran + 1))
	if [ "$got" != "$want" ]; then
		echo "exit $got, not $want: $line"
		sed 's/^/  /' "${TMPDIR:-/tmp}/readme-err.$$"
		bad=$((bad + 1))
	fi
done <"${TMPDIR:-/tmp}/readme.$$"
rm -f "${TMPDIR:-/tmp}/readme.$$" "${TMPDIR:-/tmp}/readme-err.$$"
echo "readme: $ran examples ran, $skipped skipped, $bad failed"
[ "$ran" -gt 10 ] && [ "$bad" = 0 ]
