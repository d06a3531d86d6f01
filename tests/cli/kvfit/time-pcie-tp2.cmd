kvfit llama-3.1-8b --gpu l40s --tp 2 --isl 1000 --osl 200 -u 1,8 -o json
