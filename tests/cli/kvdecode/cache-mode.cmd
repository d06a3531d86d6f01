kvdecode --cache maybe
