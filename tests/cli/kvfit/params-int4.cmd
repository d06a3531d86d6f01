kvfit --params llama-3.1-8b --weights-dtype int4
