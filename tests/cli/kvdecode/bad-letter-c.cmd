kvdecode -c on
