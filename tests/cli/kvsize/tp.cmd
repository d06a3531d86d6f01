kvsize llama-3.1-8b --tp 1 -c 1 && kvsize llama-3.1-8b --tp 8 -c 1 --no-header && kvsize llama-3.1-8b --tp 16 -c 1 --no-header && kvsize deepseek-v3 --tp 8 -c 1 --no-header
