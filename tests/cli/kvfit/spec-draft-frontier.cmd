kvfit llama-3.1-70b --gpu h100-sxm --tp 4 --draft tests/configs/llama-3.2-1b-instruct.json --spec-tokens 4 --acceptance-length 2.9 --isl 1000 --osl 500 --users 1:256:x2
