kvbench --layout ,
