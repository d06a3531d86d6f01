kvbench --kv-dtype fp7
