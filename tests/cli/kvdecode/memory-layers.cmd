KV_MEM_AVAILABLE=300M kvdecode --threads 1
