#!/bin/sh
# burst.sh BUILD SRC: kvfit --arrivals burst (a benchmark's requests of
# fixed lengths at a concurrency: the first users' sent together, each
# other as one ends) against serve-sim.py --prompts, which runs the same
# requests step by step under the engines' scheduling rules with the same
# step times (the datasheet's:
# --bw-efficiency 1, not the measured efficiencies): time to first token, time per output token, latency and
# output tokens a second agree within 2% in every case (the model keeps
# the requests whose prompts end in one step together, and interpolates
# a token's cost between contexts; the simulation keeps every request).
fit=$1/kvfit src=$2
[ -x "$fit" ] || exit 77
command -v python3 >/dev/null || { echo "burst.sh: no python3: skipped"; exit 77; }
cd "$src" || exit 1
fail=0
# prompts users isl osl budget rule (0 chunks beside decodes, 1 alone, 2 whole)
while read -r n b isl osl bud rule; do
	case $rule in 0) eng=ideal ;; 1) eng=sglang ;; 2) eng=trtllm ;; esac
	fit_row=$("$fit" llama-3.1-8b -e "$eng" --gpu h100-sxm --weights 16GB --bw-efficiency 1 \
		--reserve 0 --isl "$isl" --osl "$osl" -u "$b" \
		--max-num-batched-tokens "$bud" --arrivals burst \
		--num-prompts "$n" -o tsv 2>/dev/null | awk -F'\t' '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ print $c["ttft_ms"], $c["tpot_ms"], $c["latency_ms"], $c["out_tokens_per_s"] }')
	sim_row=$(python3 tests/scripts/serve-sim.py --prompts "$n" "$b" "$isl" "$osl" "$bud" "$rule" "$bud" | tr '\t' ' ')
	echo "$n $b $isl $osl $bud $rule | $fit_row | $sim_row" | awk '
	{
		split($0, p, "|"); split(p[2], f, " "); split(p[3], s, " ")
		bad = ""
		split("ttft tpot latency tokens/s", name, " ")
		for (k = 1; k <= 4; k++)
			if (!(f[k] > 0) || f[k] / s[k] - 1 > 0.02 || s[k] / f[k] - 1 > 0.02)
				bad = bad " " name[k]
		printf "prompts %s users %s isl %s osl %s budget %s rule %s: ttft %s/%s tpot %s/%s latency %s/%s tokens/s %s/%s%s\n",
			$1, $2, $3, $4, $5, $6, f[1], s[1], f[2], s[2], f[3], s[3], f[4], s[4],
			bad != "" ? "  BEYOND 2%:" bad : ""
		exit bad != ""
	}' || fail=1
done <<'CASES'
1 1 1000 200 8192 0
64 64 1000 200 8192 0
640 64 1000 200 8192 0
300 16 1000 200 2048 0
256 256 1000 100 8192 0
640 64 1000 200 8192 1
200 50 3000 50 8192 1
640 64 1000 200 8192 2
100 32 4000 20 8192 2
CASES
exit $fail
