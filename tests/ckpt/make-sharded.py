#!/usr/bin/env python3
"""make-sharded.py - writes tests/ckpt/tiny-sharded: tiny-gpt2's tensors
split over two shards as Transformers saves a sharded checkpoint
(model-00001-of-00002.safetensors, model-00002-of-00002.safetensors and
model.safetensors.index.json, whose weight_map names each tensor's shard
and whose metadata.total_size is their bytes), beside a copy of its
config.json. The first shard holds the embeddings and layer 0, the second
layer 1 and the final norm.

It is what fuzz_index reads its indexes against, and kvdecode on it must
give what it gives on tiny-gpt2 (the same tensors, so the same tokens).
The tensors' bytes are read from tiny-gpt2's model.safetensors (written
by make-tiny.py), so the files are the same on every run. Python's
standard library only.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "tiny-gpt2")
OUT = os.path.join(HERE, "tiny-sharded")
SHARDS = ["model-00001-of-00002.safetensors",
          "model-00002-of-00002.safetensors"]


def read(path):
    """The tensors of a safetensors file, in the order of their data:
    (name, dtype, shape, bytes)."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    header.pop("__metadata__", None)
    items = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"])
    return [(name, t["dtype"], t["shape"],
             data[t["data_offsets"][0]:t["data_offsets"][1]])
            for name, t in items]


def write(path, tensors):
    """tensors as one file, the header laid out as make-tiny.py does."""
    header, at = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [at, at + len(data)]}
        at += len(data)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode())
        for t in tensors:
            f.write(t[3])


def main():
    tensors = read(os.path.join(SRC, "model.safetensors"))
    second = [t for t in tensors
              if t[0].startswith("h.1.") or t[0].startswith("ln_f.")]
    first = [t for t in tensors if t not in second]
    os.makedirs(OUT, exist_ok=True)
    weight_map = {}
    for name, part in zip(SHARDS, (first, second)):
        write(os.path.join(OUT, name), part)
        for t in part:
            weight_map[t[0]] = name
    index = {"metadata": {"total_size": sum(len(t[3]) for t in tensors)},
             "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(OUT, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")
    with open(os.path.join(SRC, "config.json"), "rb") as f:
        config = f.read()
    with open(os.path.join(OUT, "config.json"), "wb") as f:
        f.write(config)


main()
