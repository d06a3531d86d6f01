kvdecode --layers 0
