kvfit llama-3.1-70b --gpu h100 --tp 4 --ctx 32k --kv-dtype fp8 --isl 1000 --osl 200 --min-users 8 --max-tpot 22 >/tmp/kvfit-gate-p.tsv; s=$?; cut -f27,30,46,51 /tmp/kvfit-gate-p.tsv; exit $s
