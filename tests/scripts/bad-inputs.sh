#!/bin/sh
# bad-inputs.sh BUILD SRC: tests/bad-inputs.md is in step with the golden
# cases it lists (scripts/bad-inputs rewrites it).
src=$2
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
cp -r "$src/scripts" "$src/tests" "$tmp/" 2>/dev/null
sh "$tmp/scripts/bad-inputs" || exit 1
diff -u "$src/tests/bad-inputs.md" "$tmp/tests/bad-inputs.md" && echo "the matrix lists every failing case"
