printf "a\tb\n1\t2\n" | kvfit --gpu h100 -
