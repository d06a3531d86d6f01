kvdecode --kv-heads 5
