kvfit llama-3.1-8b --gpu h100 --kv-memory 64GiB --ctx 1000,8k --block-size 16,256 | cut -f1,6,8,10,21-23,27
