#!/bin/sh
# profile.sh BUILD SRC: kvbench --profile writes this machine as a GPU
# table that kvfit reads back (--gpu-file, --gpu local): an entry per
# thread count, the fastest (its decode step's bytes a second) also
# "local", its efficiencies in (0, 2] (above 1 where a step outran its
# probe);
# the file is replaced whole, with nothing left beside it; an unwritable
# path is refused before anything runs. Times are never asserted.
bench=$1/kvbench fit=$1/kvfit src=$2
[ -x "$bench" ] && [ -x "$fit" ] || exit 77
[ -r /proc/meminfo ] || { echo "no /proc/meminfo: skipped"; exit 77; }
cd "$src" || exit 1
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "profile.sh: $*"; fail=1; }
small="--layers 1 --vocab 256 -R 1 --warmup 0 --membw-size 4MiB --sgemm-n 64"

"$bench" --profile "$tmp/local.json" $small -j 2,1 >"$tmp/rows" 2>"$tmp/err" ||
	say "profile failed: $(cat "$tmp/err")"
# its rows as any run's: membw, sgemm, decode, nocache, batches of 4 and
# 32 per thread count
[ "$(tail -n +2 "$tmp/rows" | cut -f1,3,4,7 | tr '\t\n' ' |')" = \
	"membw   2|sgemm   2|decode 160 1 2|nocache 256 1 2|batch 160 4 2|batch 160 32 2|membw   1|sgemm   1|decode 160 1 1|nocache 256 1 1|batch 160 4 1|batch 160 32 1|" ] ||
	say "rows: $(cut -f1,3,4,7 "$tmp/rows")"
[ "$(ls "$tmp")" = "$(printf 'err\nlocal.json\nrows')" ] || say "left beside it: $(ls "$tmp")"

# kvfit reads it: the table, and a plan on "local" (the fastest)
"$fit" --gpu-file "$tmp/local.json" --list-gpus >"$tmp/list" 2>"$tmp/err" ||
	say "--list-gpus failed: $(cat "$tmp/err")"
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		if ($c["gpu"] != "local-j" $c["threads"]) { print "name " $c["gpu"]; bad = 1 }
		if (!($c["memory_bytes"] > 0) || !($c["bandwidth_gbps"] > 0) || !($c["bf16_tflops"] > 0)) { print "figures: " $0; bad = 1 }
		if ($c["fp8_tflops"] != "" || $c["interconnect_gbps"] != "") { print "a datasheet figure: " $0; bad = 1 }
		for (k = 0; k < 2; k++) {
			e = $c[k ? "flops_efficiency" : "bandwidth_efficiency"]
			if (!(e > 0 && e <= 2)) { print "efficiency " e; bad = 1 }
		}
		d = $c["decode_tflops"]
		if (d != "" && !(d > 0 && d < 10 * $c["bf16_tflops"])) { print "decode_tflops " d; bad = 1 }
		s = $c["serial_fraction"]
		if (s != "" && !(s >= 0 && s <= 1)) { print "serial_fraction " s; bad = 1 }
	}
	END { if (NR != 3) { print NR - 1 " entries"; bad = 1 }; exit bad }' "$tmp/list" ||
	say "table: $(cat "$tmp/list")"
"$fit" --gpu-file "$tmp/local.json" --gpu local llama-3.1-8b --ctx 1k >"$tmp/fit" 2>"$tmp/err" ||
	say "kvfit --gpu local failed: $(cat "$tmp/err")"
fastest=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ r = $c["bandwidth_gbps"] * $c["bandwidth_efficiency"]
	  if (NR == 2 || r > best) { best = r; name = $c["gpu"] } }
	END { print name }' "$tmp/list")
[ "$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "gpu") c = i } NR == 2 { print $c }' "$tmp/fit")" = "$fastest" ] ||
	say "gpu column, not the fastest $fastest: $(cat "$tmp/fit")"
"$fit" --gpu-file "$tmp/local.json" --gpu local-j1 llama-3.1-8b --ctx 1k >/dev/null 2>"$tmp/err" ||
	say "kvfit --gpu local-j1 failed: $(cat "$tmp/err")"
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 - "$tmp/local.json" <<'PY' || say "json: $(cat "$tmp/local.json")"
import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
assert [e["name"] for e in g] == ["local-j2", "local-j1"], g
rate = [e["bandwidth_gbps"] * e["bandwidth_efficiency"] for e in g]
fast = 0 if rate[0] >= rate[1] else 1
assert g[fast]["aliases"] == ["local"] and "aliases" not in g[1 - fast], g
assert g[0]["fp8_tflops"] is None and g[0]["threads"] == 2, g
assert g[0]["source"].startswith("kvbench --profile, 20"), g[0]["source"]
assert "float32 sgemm" in g[0]["note"] and "MemTotal" in g[0]["note"], g[0]["note"]
PY
fi

# again over it: replaced whole, one thread count now
"$bench" --profile "$tmp/local.json" $small -j 1 >/dev/null 2>"$tmp/err" ||
	say "second profile failed: $(cat "$tmp/err")"
[ "$("$fit" --gpu-file "$tmp/local.json" --list-gpus --no-header | cut -f1)" = local-j1 ] ||
	say "not replaced: $(cat "$tmp/local.json")"
[ "$(ls "$tmp" | grep -c local.json)" = 1 ] || say "left beside it: $(ls "$tmp")"

# a path that cannot be written: refused at once, nothing printed on stdout
"$bench" --profile "$tmp/no/such/dir.json" $small >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || say "unwritable path: not exit 2"
grep -q "^kvbench: --profile: $tmp/no/such/dir.json: No such file or directory$" "$tmp/err" ||
	say "unwritable path: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && say "unwritable path: rows printed"
"$bench" --profile "$tmp" $small >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "Is a directory" "$tmp/err" || say "a directory: $(cat "$tmp/err")"
[ $fail = 0 ] && echo "a profile written, read back by kvfit, replaced whole"
exit $fail
