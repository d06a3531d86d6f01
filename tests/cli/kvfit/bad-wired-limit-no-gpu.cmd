kvfit llama-3.1-8b --gpu-mem 128GiB --ctx 32k --wired-limit-mb 98304
