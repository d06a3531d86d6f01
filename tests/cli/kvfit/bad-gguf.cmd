printf 'GGUF\003\000\000\000' > /tmp/kvfit-bad.gguf; kvfit /tmp/kvfit-bad.gguf --gpu h100
