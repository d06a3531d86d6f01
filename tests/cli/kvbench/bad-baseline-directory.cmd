kvbench --baseline tests
