kvfit llama-3.1-8b --gpu h100-sxm --isl 1000 --osl 200 --disagg --prefill-workers 1 --decode-workers 1 --request-rate 100
