echo "{ nope" | kvsize -
