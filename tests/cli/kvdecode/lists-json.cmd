kvdecode --layers 1 --vocab 1000 --prompt 8 --new 2 --users 1,2 --threads 2 --block-size 4,8 --json 2>/dev/null | sed 's/"ms_cache":[0-9.]*,"ms_nocache":[0-9.]*,//; s/,"max_abs_diff":[0-9.]*//'
