kvdecode --lengths 0
