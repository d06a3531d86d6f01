kvdecode --mla-rope 16
