kvbench --logit-scale 0
