kvfit llama-3.1-8b --gpu h100 --tp 4 --tensor-parallel-size 2
