#!/bin/sh
# article-table.sh BUILD SRC: scripts/article-table prints the first
# article's table exactly as recorded (every figure matches the article).
bin=$1 src=$2
KVSIZE=$bin/kvsize sh "$src/scripts/article-table" | diff -u "$src/tests/scripts/article-table.out" -
