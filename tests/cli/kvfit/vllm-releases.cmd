kvfit jamba-v0.1 --gpu b200 --ctx 256k --engine vllm | cut -f1,6-8,10,22-25,27 && kvfit jamba-v0.1 --gpu b200 --ctx 256k --engine vllm@0.27 --no-header | cut -f1,6-8,10,22-25,27
