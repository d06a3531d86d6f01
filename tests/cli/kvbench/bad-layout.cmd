kvbench --layout sideways
