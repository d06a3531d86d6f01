kvfit llama-3.1-8b --gpu m4-max-128gb --gpu-mem 100GiB --ctx 32k --wired-limit-mb 98304
