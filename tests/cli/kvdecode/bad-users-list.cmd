kvdecode --users 1,,2
