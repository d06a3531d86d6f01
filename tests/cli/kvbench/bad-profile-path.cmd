kvbench --profile /nonexistent/dir/local.json
