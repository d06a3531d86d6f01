KV_MEM_AVAILABLE=3M kvdecode --threads 1
