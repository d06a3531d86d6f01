kvbench --bench decode --ctx 128:8192:x1
