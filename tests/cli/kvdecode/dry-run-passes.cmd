kvdecode --dry-run --prompt 5 --new 3 && kvdecode --dry-run --prompt 1 --new 1000 --no-header && kvdecode --dry-run --prompt 30000 --new 300 --no-header
