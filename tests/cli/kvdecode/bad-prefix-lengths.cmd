kvdecode --prefix-reuse --lengths 10
