kvdecode --lengths 10,20 --users 3
