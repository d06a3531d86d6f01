kvfit deepseek-v3 gpt-oss-20b --gpu h200 --tp 8 --ctx 8k --engine vllm
