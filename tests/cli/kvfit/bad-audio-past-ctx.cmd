kvfit tests/configs/voxtral-mini-3b-2507.json --gpu h100-sxm --ctx 32k --audio-seconds 3000
