#!/bin/sh
# floors.sh BUILD SRC: libkv's floors, its includes and its calls go one
# way, with no circle (floors.py says how).
exec python3 "$2/tests/scripts/floors.py" "$1" "$2"
