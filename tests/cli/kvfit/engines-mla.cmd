kvfit deepseek-v2-lite --gpu h100-sxm --ctx 32k --engine all
