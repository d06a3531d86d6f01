kvdecode --mla 769
