kvdecode --mla 512 --mla-rope 64 --dry-run
