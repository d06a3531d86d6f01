for m in $(ls configs/*.json | sed "s|configs/||; s|\.json||" | grep -v -e gpus -e efficiency); do kvsize $m -c 1,32k,128k --no-header 2>&1; done
