kvdecode deepseek-v3 --dry-run
