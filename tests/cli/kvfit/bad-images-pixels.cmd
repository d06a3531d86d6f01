kvfit tests/bad/vision-pixels/config.json --gpu h100-sxm --images 1
