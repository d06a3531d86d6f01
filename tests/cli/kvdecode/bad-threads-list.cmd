kvdecode --threads 1,300
