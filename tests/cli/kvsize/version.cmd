kvsize --version
