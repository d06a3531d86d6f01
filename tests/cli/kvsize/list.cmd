kvsize --list
