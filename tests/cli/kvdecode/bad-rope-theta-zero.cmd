kvdecode --new 4 tests/bad/rope-theta-zero.json
