kvdecode mixtral-8x7b
