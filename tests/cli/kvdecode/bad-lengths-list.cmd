kvdecode --lengths 10,,20
