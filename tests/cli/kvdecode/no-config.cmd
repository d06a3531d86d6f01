kvdecode no-such-model
