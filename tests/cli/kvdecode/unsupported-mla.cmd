kvdecode deepseek-v3
