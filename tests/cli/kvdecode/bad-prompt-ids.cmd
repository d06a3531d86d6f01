kvdecode --prompt-ids 1,,2
