kvdecode --kv-dtype int8 --cache off
