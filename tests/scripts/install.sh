#!/bin/sh
# install.sh BUILD SRC: cmake --install puts the tools, man pages and configs
# under a prefix, and an installed kvsize, run from elsewhere with no
# KV_CONFIG_PATH, finds the installed configs first.
bin=$1 src=$2
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
cmake --install "$bin" --prefix "$tmp/prefix" >"$tmp/log" 2>&1 ||
	{ cat "$tmp/log"; exit 1; }
p=$tmp/prefix
fail=0
for f in bin/kvsize bin/kvplot bin/kvplot-steps bin/kvplot-kvheads \
	bin/kvplot-efficiency share/man/man1/kvsize.1 share/man/man7/kvtools.7 \
	share/kvtools/configs/llama-3.1-8b.json \
	share/kvtools/configs/more/nemotron-nano-9b-v2.json; do
	[ -e "$p/$f" ] || { echo "not installed: $f"; fail=1; }
done
cd / || exit 1
out=$(env -u KV_CONFIG_PATH "$p/bin/kvsize" llama-3.1-8b --ctx 8192 --no-header)
[ "$out" = "$(printf 'llama-3.1-8b\tbf16\t32\t8\t128\t128\t8192\t1\t131072\t1073741824\tauto')" ] ||
	{ echo "installed kvsize printed: $out"; fail=1; }
# a published config the tests read is found by name, installed
more=$(env -u KV_CONFIG_PATH "$p/bin/kvsize" nemotron-nano-9b-v2 --no-header | cut -f1,3)
[ "$more" = "$(printf 'nemotron-nano-9b-v2\t4')" ] ||
	{ echo "installed kvsize, a config of more/: $more"; fail=1; }
first=$(env -u KV_CONFIG_PATH "$p/bin/kvsize" --list --no-header | head -1 | cut -f4)
case $first in
"$p"/share/kvtools/configs/*) ;;
*) echo "installed kvsize lists first: $first"; fail=1 ;;
esac
if command -v man >/dev/null 2>&1; then
	man -l "$p/share/man/man1/kvsize.1" >/dev/null 2>&1 || { echo "man -l kvsize.1 failed"; fail=1; }
	man -l "$p/share/man/man7/kvtools.7" >/dev/null 2>&1 || { echo "man -l kvtools.7 failed"; fail=1; }
fi
# an installed chart finds the installed kvplot beside it
printf 'bench\tctx\tusers\tkv_heads\tkv_dtype\tms_median\tbytes\nattn\t8192\t1\t12\tf32\t1.5\t100\n' >"$tmp/run.tsv"
if command -v gnuplot >/dev/null 2>&1; then
	"$p/bin/kvplot-kvheads" "$tmp/k.png" "$tmp/run.tsv" 2>"$tmp/plot.err" &&
		[ -s "$tmp/k.png" ] || { echo "installed kvplot-kvheads failed:"; cat "$tmp/plot.err"; fail=1; }
fi
[ $fail = 0 ] && echo "installed and found"
exit $fail
