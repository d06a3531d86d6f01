kvsize tests/configs/glm-4.7-flash.json --ctx 8192,131072
