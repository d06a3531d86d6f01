kvdecode --lengths 100,20 --pool-blocks 3
