kvfit llama-3.1-8b --gpu h100 --tp 2 --tensor-parallel-size 2 --ctx 8k | cut -f1,4
