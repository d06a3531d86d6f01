echo "{\"model_type\": \"foo\", \"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4}" | kvsize - -c 10
