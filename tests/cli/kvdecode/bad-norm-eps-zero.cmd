kvdecode --new 4 tests/bad/norm-eps-zero.json
