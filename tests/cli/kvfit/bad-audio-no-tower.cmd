kvfit llama-3.1-8b --gpu h100-sxm --audio-seconds 10
