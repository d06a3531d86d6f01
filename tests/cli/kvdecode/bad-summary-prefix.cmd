kvdecode --prefix-reuse --summary /tmp/kvdecode-prefix-summary.tsv --new 2
