kvdecode gemma-2-9b
