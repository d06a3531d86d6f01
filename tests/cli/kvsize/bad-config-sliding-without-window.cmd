kvsize tests/bad/sliding-without-window.json
