KV_MEM_AVAILABLE=45M kvdecode --threads 1 --layers 1
