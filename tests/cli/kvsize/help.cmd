kvsize --help
