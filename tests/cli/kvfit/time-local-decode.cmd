kvfit --gpu-file tests/cli/kvfit/data/local.json --gpu local gpt2 -e ideal --weights-dtype f32 -t f32 --isl 512 --osl 1 -u 1,4,32
