kvdecode --mla 256 --kv-heads 4
