kvdecode mistral-7b-v0.1
