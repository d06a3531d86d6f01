kvbench --bench ,
