kvdecode --kv-dtype fp7
