kvfit llama-3.1-70b --gpu h100-sxm --tp 8 --isl 8k --osl 1k --users 1,32 --max-num-batched-tokens 2048 --bw-efficiency 0.8 --flops-efficiency 0.6 --interconnect 450
