KV_MEM_AVAILABLE=40M kvdecode --threads 1 --layers 1
