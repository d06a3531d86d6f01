kvbench --bench decode,warp
