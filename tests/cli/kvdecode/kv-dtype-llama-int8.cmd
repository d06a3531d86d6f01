kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 12 --new 8 --kv-dtype int8 --summary /dev/fd/3 3>&1 >/dev/null 2>/dev/null | cut -f17-20
