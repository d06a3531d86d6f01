kvdecode --lengths uniform:10:300 --users 8
