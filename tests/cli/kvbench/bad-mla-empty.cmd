kvbench --mla ,
