kvfit --help
