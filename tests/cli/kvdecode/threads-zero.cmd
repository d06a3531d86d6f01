kvdecode --threads 0
