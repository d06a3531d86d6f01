kvdecode --mla 0
