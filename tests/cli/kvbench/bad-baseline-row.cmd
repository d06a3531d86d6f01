printf "bench\tmodel\tctx\tusers\tkv_heads\tthreads\tms_median\nattn\tgpt2\tlots\t1\t12\t2\t3.5\n" > /tmp/kvbench-bad.tsv; kvbench --baseline /tmp/kvbench-bad.tsv
