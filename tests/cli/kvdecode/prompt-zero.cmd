kvdecode --prompt 0
