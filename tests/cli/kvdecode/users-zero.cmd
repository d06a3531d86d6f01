kvdecode --users 0
