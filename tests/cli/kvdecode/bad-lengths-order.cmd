kvdecode --lengths uniform:300:10
