kvdecode jamba-v0.1
