#!/bin/sh
# published.sh BUILD SRC: docs/published/points.tsv keeps its form (every
# row its 18 fields, a set, an engine, a metric and a statistic kvfit
# knows, numbers where numbers go, flags that are options, a model whose
# config is in configs/ or tests/configs/), and scripts/time-vs-published
# hands a point's flags to kvfit as they stand (a stand-in kvfit records
# the command it was given).
src=$2
command -v python3 >/dev/null || { echo "published.sh: no python3: skipped"; exit 77; }
python3 - "$src" <<'EOF' || exit 1
import csv, os, sys
src = sys.argv[1]
path = os.path.join(src, "docs/published/points.tsv")
cols = ["set", "engine", "engine_version", "model", "gpu", "tp", "pp",
        "weights", "kv", "isl", "osl", "users", "prompts", "metric", "stat",
        "value", "flags", "source"]
bad = []
with open(path) as f:
    r = csv.reader(f, delimiter="\t")
    head = next(r)
    if head != cols:
        sys.exit("published.sh: points.tsv: header %s, want %s" % (head, cols))
    for n, row in enumerate(r, 2):
        def err(what):
            bad.append("points.tsv line %d: %s" % (n, what))
        if len(row) != len(cols):
            err("%d fields, want %d" % (len(row), len(cols)))
            continue
        p = dict(zip(cols, row))
        if p["set"] not in ("calib", "valid"):
            err("set '%s'" % p["set"])
        if p["engine"] not in ("vllm", "sglang", "trtllm", "llamacpp"):
            err("engine '%s'" % p["engine"])
        if p["metric"] not in ("out_tokens_per_s", "out_tokens_per_s_gpu",
                               "ttft_ms", "tpot_ms", "latency_ms"):
            err("metric '%s'" % p["metric"])
        if p["stat"] not in ("mean", "median"):
            err("stat '%s'" % p["stat"])
        for k in ("tp", "pp", "isl", "osl", "prompts"):
            if not p[k].isdigit() or int(p[k]) < 1:
                err("%s '%s'" % (k, p[k]))
        if not p["users"].isdigit():
            err("users '%s'" % p["users"])
        try:
            if not float(p["value"]) > 0:
                err("value '%s'" % p["value"])
        except ValueError:
            err("value '%s'" % p["value"])
        words = p["flags"].split()
        if p["flags"] != " ".join(words) or \
                (words and not words[0].startswith("--")):
            err("flags '%s': options, one space apart" % p["flags"])
        if not any(os.path.exists(os.path.join(src, d, p["model"] + ".json"))
                   for d in ("configs", "tests/configs")):
            err("model '%s': no config" % p["model"])
        if not p["source"]:
            err("no source")
if bad:
    sys.exit("published.sh: " + "\n".join(bad[:20]))
EOF
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# a point with flags, one without, through a kvfit that prints what it got
head -1 "$src/docs/published/points.tsv" >"$tmp/points.tsv"
printf 'valid\tsglang\tv0.5.4\tqwen3-8b\th100-sxm\t4\t1\tauto\tauto\t2000\t100\t500\t500\tout_tokens_per_s\tmean\t100\t--ep-size 4 --max-running-requests 256\ta test\n' >>"$tmp/points.tsv"
printf 'valid\tvllm\tv0.11.0\tqwen3-8b\th100-sxm\t1\t1\tauto\tauto\t128\t4\t1000\t1000\tttft_ms\tmean\t50\t\tanother\n' >>"$tmp/points.tsv"
cat >"$tmp/kvfit" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/args"
printf 'out_tokens_per_s\tttft_ms\n125\t40\n'
EOF
chmod +x "$tmp/kvfit"
out=$(python3 "$src/scripts/time-vs-published" --points "$tmp/points.tsv" \
	--kvfit "$tmp/kvfit" --rows 2>&1) || { echo "published.sh: $out"; exit 1; }
want1="qwen3-8b --gpu h100-sxm --tp 4 --pp 1 --engine sglang --isl 2000 --osl 100 -o tsv --arrivals burst --num-prompts 500 --users 500 --ep-size 4 --max-running-requests 256"
want2="qwen3-8b --gpu h100-sxm --tp 1 --pp 1 --engine vllm --isl 128 --osl 4 -o tsv --arrivals burst --num-prompts 1000 --users 1000"
got=$(cat "$tmp/args")
if [ "$got" != "$want1
$want2" ]; then
	printf 'published.sh: kvfit was run as\n%s\nwant\n%s\n%s\n' "$got" "$want1" "$want2"
	exit 1
fi
# the rows: 125 against 100 is +25%, 40 against 50 is -20%
for row in "out_tokens_per_s	100	125	+0.250" "ttft_ms	50	40	-0.200"; do
	case $out in
	*"$row"*) ;;
	*) printf 'published.sh: no row "%s" in\n%s\n' "$row" "$out"; exit 1 ;;
	esac
done
