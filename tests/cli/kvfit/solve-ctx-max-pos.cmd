kvfit gemma-2-9b --gpu h200 --users 1 --solve ctx
