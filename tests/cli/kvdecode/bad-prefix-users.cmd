kvdecode --prefix-reuse --users 2
