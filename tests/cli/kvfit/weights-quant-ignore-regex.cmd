kvfit tests/ckpt/tiny-awq --gpu-mem 1GB --ctx 512 --engine ideal | cut -f1,11,12
