for q in 1 5 20; do kvfit llama-3.1-8b --gpu h100-sxm --isl 1000 --osl 200 --request-rate $q | cut -f1,6,27,30,45-48,54,55; done
