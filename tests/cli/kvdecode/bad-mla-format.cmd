kvdecode --mla 256 --kv-dtype fp8
