kvdecode --weights-dtype q8_0
