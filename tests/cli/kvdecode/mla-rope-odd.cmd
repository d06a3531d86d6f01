kvdecode --mla 256 --mla-rope 7
