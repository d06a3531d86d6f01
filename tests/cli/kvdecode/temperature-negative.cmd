kvdecode --temperature -1
