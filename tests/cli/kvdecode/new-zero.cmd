kvdecode --new 0
