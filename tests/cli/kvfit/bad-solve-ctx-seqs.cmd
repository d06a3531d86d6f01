kvfit llama-3.1-8b --gpu h100 --solve ctx --users 2000
