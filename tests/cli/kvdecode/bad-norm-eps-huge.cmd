kvdecode --new 4 tests/bad/norm-eps-huge.json
