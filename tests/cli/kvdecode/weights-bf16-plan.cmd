kvdecode --weights-dtype bf16 --dry-run
