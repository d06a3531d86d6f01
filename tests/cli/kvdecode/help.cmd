kvdecode --help
