printf "bench\tmodel\tctx\tusers\tkv_heads\tthreads\tms_median\nattn\tgpt2-small+mla\t64\t1\t1\t2\t3.5\n" > /tmp/kvbench-bad-mla.tsv; kvbench --baseline /tmp/kvbench-bad-mla.tsv
