#!/bin/sh
# reproduce.sh BUILD SRC: scripts/reproduce-articles --no-time finds every
# exact figure of the two articles (bytes, capacities, token passes).
bin=$1 src=$2
KV_BUILD=$bin sh "$src/scripts/reproduce-articles" --no-time >/tmp/reproduce.$$ 2>&1
st=$?
grep -E "DIFFERS|FAILS|every figure" /tmp/reproduce.$$
rm -f /tmp/reproduce.$$
exit $st
