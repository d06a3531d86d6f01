kvsize tests/hf-cache/models--meta-llama--Llama-3.1-8B --ctx 8k && HF_HUB_CACHE=tests/hf-cache kvsize meta-llama/llama-3.1-8b --ctx 8k --no-header
