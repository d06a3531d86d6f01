kvdecode --layout sideways
