kvfit llama-3.1-8b --engine llamacpp --gpu rtx-4090 --weights-dtype bf16 --ctx 128k --solve layers --host-mem 64GiB
