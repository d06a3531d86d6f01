kvdecode --layers 100000
