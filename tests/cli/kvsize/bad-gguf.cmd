printf 'GGUF\003\000\000\000' | kvsize -; printf '\001\002\000\003' > /tmp/kvsize-bad.bin; kvsize /tmp/kvsize-bad.bin
