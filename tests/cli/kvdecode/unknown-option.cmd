kvdecode --frobnicate
