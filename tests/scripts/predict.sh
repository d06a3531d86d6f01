#!/bin/sh
# predict.sh BUILD SRC: scripts/predict-vs-measure on its small grid:
# kvfit's times against kvbench's measurements on this machine, failing
# when the median error passes 20%. Only an optimised build's times are
# the engine's: a sanitizer, coverage or debug build skips, and says so.
build=$1 src=$2
# its refusals, in any build
for bad in "--passes 0|--passes: a whole number from 1, got '0'" \
	"--passes 2x|--passes: a whole number from 1, got '2x'" \
	"--frobnicate|unknown option '--frobnicate'"; do
	args=${bad%%|*} want="predict-vs-measure: ${bad#*|}"
	# shellcheck disable=SC2086
	got=$(KV_BIN=$build sh "$src/scripts/predict-vs-measure" $args 2>&1 >/dev/null)
	st=$?
	if [ "$st" != 2 ] || [ "$got" != "$want" ]; then
		echo "predict.sh: $args: exit $st, '$got'; want exit 2, '$want'"
		exit 1
	fi
done
cache=$build/CMakeCache.txt
if ! grep -Eq '^CMAKE_BUILD_TYPE:STRING=(Release|RelWithDebInfo)$' "$cache" ||
	grep -Eq '^KV_(SANITIZE|COVERAGE):BOOL=ON$' "$cache"; then
	echo "predict.sh: skipped: times of a sanitizer, coverage or debug build are not the engine's"
	exit 77
fi
KV_BIN=$build exec sh "$src/scripts/predict-vs-measure" --small --max-median 0.20
