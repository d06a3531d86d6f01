kvfit --version
