kvdecode deepseek-v2-lite --kv-heads 4
