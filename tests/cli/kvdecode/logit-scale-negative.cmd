kvdecode --logit-scale -1
