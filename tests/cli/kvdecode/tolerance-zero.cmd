{ kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 40 --new 4 --tol 0 --threads 2 2>&1 >/dev/null; echo "exit $?"; } | grep -v "^time:" | sed "s/difference: [^ ]* /difference: X /"
