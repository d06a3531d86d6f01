kvfit llama-3.1-8b gpt-oss-20b --kv-memory 60GiB --gpu h100-sxm --ctx 128k
