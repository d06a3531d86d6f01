#!/bin/sh
# steady.sh BUILD SRC: kvfit's steady state (a fluid: each step carries
# the cycle's mean share of prompts) against serve-sim.py, which runs the
# same closed loop step by step under the engines' scheduling rules with
# the same step times (the datasheet's:
# --bw-efficiency 1, not the measured efficiencies). Latency and output tokens a second agree within
# 10% in every case; time per output token too where the prompts ride
# beside the decodes. Where requests started together stay in step (the
# simulation's fixed lengths), prompts arrive in clumps: time to first
# token is longer than kvfit's staggered arrivals say, and for SGLang,
# whose prompts pause the decodes, tokens after the first are quicker;
# those two are printed, not held (kvfit(1), TIME, Steady state).
fit=$1/kvfit src=$2
[ -x "$fit" ] || exit 77
command -v python3 >/dev/null || { echo "steady.sh: no python3: skipped"; exit 77; }
cd "$src" || exit 1
fail=0
# users isl osl budget alone
while read -r b isl osl bud alone; do
	eng=ideal; [ "$alone" = 1 ] && eng=sglang
	set -- --isl "$isl" --osl "$osl" -u "$b"
	[ "$bud" = 0 ] || set -- "$@" --max-num-batched-tokens "$bud"
	fit_row=$("$fit" llama-3.1-8b -e "$eng" --gpu h100-sxm --weights 16GB --bw-efficiency 1 \
		"$@" -o tsv 2>/dev/null | awk -F'\t' '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ print $c["ttft_ms"], $c["tpot_ms"], $c["latency_ms"], $c["out_tokens_per_s"] }')
	sim_row=$(python3 tests/scripts/serve-sim.py "$b" "$isl" "$osl" "$bud" "$alone" | tr '\t' ' ')
	echo "$b $isl $osl $bud $alone | $fit_row | $sim_row" | awk -v alone="$alone" '
	{
		split($0, p, "|"); split(p[2], f, " "); split(p[3], s, " ")
		bad = ""
		for (k = 3; k <= 4; k++) if (f[k] / s[k] - 1 > 0.10 || s[k] / f[k] - 1 > 0.10) bad = bad " " (k == 3 ? "latency" : "tokens/s")
		if (alone == 0 && (f[2] / s[2] - 1 > 0.10 || s[2] / f[2] - 1 > 0.10)) bad = bad " tpot"
		printf "users %s isl %s osl %s budget %s %s: ttft %s/%s tpot %s/%s latency %s/%s tokens/s %s/%s%s\n",
			$1, $2, $3, $4, alone ? "sglang" : "mixed", f[1], s[1], f[2], s[2], f[3], s[3], f[4], s[4],
			bad != "" ? "  BEYOND 10%:" bad : ""
		exit bad != ""
	}' || fail=1
done <<'CASES'
2 1024 256 0 0
16 1000 200 8192 0
64 1000 200 8192 0
256 1000 200 8192 0
200 1000 101 2048 0
32 4000 100 2048 0
16 1000 200 0 1
200 1000 101 0 1
CASES
exit $fail
