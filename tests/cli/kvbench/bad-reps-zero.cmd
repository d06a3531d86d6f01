kvbench --reps 0
