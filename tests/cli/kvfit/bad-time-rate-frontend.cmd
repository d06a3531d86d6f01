kvfit llama-3.1-8b --gpu h100-sxm --isl 1000 --osl 200 --request-rate 20 --request-us 60000
