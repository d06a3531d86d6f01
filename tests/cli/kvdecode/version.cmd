kvdecode --version
