kvfit deepseek-v2-lite --gpu h100-sxm --max-loras 2
