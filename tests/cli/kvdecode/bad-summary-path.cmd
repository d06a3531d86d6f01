kvdecode --layers 1 --vocab 256 --prompt 4 --new 2 --summary /nonexistent/dir/summary.tsv
