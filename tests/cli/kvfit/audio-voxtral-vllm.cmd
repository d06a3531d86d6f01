kvfit tests/configs/voxtral-mini-3b-2507.json --gpu h100-sxm --engine vllm --ctx 32k --audio-seconds 600
