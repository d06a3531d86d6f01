kvdecode --prefix-reuse --users 1:4:x2
