kvsize --ctx 8k
