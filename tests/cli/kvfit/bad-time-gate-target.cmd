kvfit llama-3.1-70b --gpu h100 --tp 4 --ctx 32k --kv-dtype fp8 --isl 1000 --osl 200 --min-users 20 --max-tpot 22 >/tmp/kvfit-gate.tsv; s=$?; cut -f26,27,30,31,49 /tmp/kvfit-gate.tsv; exit $s
