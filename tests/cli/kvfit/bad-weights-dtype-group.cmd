kvfit llama-3.1-8b --gpu h100-sxm --weights-dtype int4-g0
