kvsize gpt-oss-20b --per-layer -c 128k -u 2
