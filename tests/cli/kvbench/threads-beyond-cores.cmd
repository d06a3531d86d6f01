kvbench -j 256 --bench membw --membw-size 1M -R 1 2>&1 >/dev/null | sed 's/has [0-9]* core/has N core/'
