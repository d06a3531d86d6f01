kvfit tests/quant/modelopt-fp8 --gpu h100-sxm --ctx 8k -e all
