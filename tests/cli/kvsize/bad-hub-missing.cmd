HF_HUB_CACHE=tests/hf-cache kvsize nobody/nothing
