kvsize tests/bad/negative-window.json
