kvdecode --prompt 4 --prompt-ids 1,2
