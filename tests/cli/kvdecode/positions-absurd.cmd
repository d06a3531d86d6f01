kvdecode --prompt 16M --new 1
