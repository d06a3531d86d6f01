kvdecode gpt2 llama-3.1-8b
