kvdecode --summary '' --new 2
