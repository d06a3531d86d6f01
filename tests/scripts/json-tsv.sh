#!/bin/sh
# json-tsv.sh BUILD SRC: --json and TSV carry the same records, cell for
# cell, for kvsize and kvfit over every config the project ships and tests
# (several contexts and formats, every engine): a number printed one way
# is the number printed the other.
bin=$1 src=$2
cd "$src" || exit 1
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
PATH=$bin:$PATH KV_CONFIG_PATH=configs python3 - <<'PY'
import glob, json, subprocess, sys

def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.returncode, p.stdout

configs = sorted(c for c in glob.glob("configs/*.json") +
                 glob.glob("tests/configs/*.json")
                 if not c.endswith("gpus.json"))
cases = [["kvsize", "--ctx", "1,8k,128k", "--kv-dtype", "auto,fp8,q4_0",
          "--users", "1,3", "--block-size", "16"],
         ["kvfit", "--gpu", "h100-sxm", "--ctx", "8k,32k", "--engine", "all"]]
bad = checked = 0
for cfg in configs:
    for case in cases:
        argv = case[:1] + [cfg] + case[1:]
        st1, tsv = run(argv)
        st2, js = run(argv + ["--json"])
        if st1 != st2:
            print("exit differs:", " ".join(argv), st1, st2); bad += 1
            continue
        if st1 != 0:
            continue
        lines = [l.split("\t") for l in tsv.splitlines() if l]
        head, rows = lines[0], lines[1:]
        recs = json.loads(js)
        if len(rows) != len(recs):
            print("rows differ:", " ".join(argv)); bad += 1
            continue
        for row, rec in zip(rows, recs):
            if list(rec.keys()) != head:
                print("columns differ:", " ".join(argv)); bad += 1
                break
            for k, cell in zip(head, row):
                v = rec[k]
                same = (cell == "" and v is None) or \
                       (isinstance(v, str) and v == cell) or \
                       (isinstance(v, (int, float)) and
                        not isinstance(v, bool) and float(cell) == v)
                checked += 1
                if not same:
                    print("cell differs:", " ".join(argv), k, cell, v)
                    bad += 1
print(f"{len(configs)} configs, {checked} cells compared, {bad} differ")
sys.exit(1 if bad or checked < 10000 else 0)
PY
