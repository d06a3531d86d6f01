kvfit deepseek-v3 --gpu h200 --dp 8 --ep 8 --users 100 --solve tp
