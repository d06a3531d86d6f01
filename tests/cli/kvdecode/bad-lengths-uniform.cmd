kvdecode --lengths uniform:5
