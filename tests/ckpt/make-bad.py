#!/usr/bin/env python3
"""make-bad.py - writes the malformed checkpoint folders the golden cases
feed kvdecode, kvbench and kvfit, each one fault the readers must refuse
(a fuzzer of checkpoint folders found them). Each folder links the files
it leaves as they are to tests/ckpt/tiny-gpt2 and writes the one it
breaks:

bad-tok-id-past       tokenizer.json maps "Ġcomputing" to 320, the model's
                      vocabulary (320 tokens) has no such row
bad-tok-id-large      the same piece mapped to 100000
bad-tok-empty         a vocabulary entry "" (id 319), which an added token
                      names: a match of no bytes
bad-tok-nul           an added token whose content is "\\u0000"
bad-tok-bom           tokenizer.json after a UTF-8 byte-order mark
bad-tok-id-real       an id written 32.0
bad-st-metadata-only  a model.safetensors of only __metadata__, no data
bad-st-bom            a header after a UTF-8 byte-order mark
bad-st-nul-name       a tensor name with \\u0000 in it
bad-st-nul-dtype      a dtype "F16\\u0000x"
bad-st-shape-real     a shape written [4.0]
bad-st-offset-exp     data_offsets written [0, 8e0]
bad-index-bom         model.safetensors.index.json after a byte-order mark
bad-index-nul-shard   a weight_map shard name with \\u0000 in it
bad-index-total-real  metadata.total_size written 20480.0
bad-vocab-config      config.json says vocab_size 300, the tensors 320

Python's standard library only; the same files on every run.
"""
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = "tiny-gpt2"
BOM = b"\xef\xbb\xbf"


def folder(name, keep):
    """A fresh folder, with links to tiny-gpt2's files of keep."""
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for f in keep:
        os.symlink(os.path.join("..", TINY, f), os.path.join(d, f))
    return d


def write(d, name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def tokenizer(change):
    """tiny-gpt2's tokenizer.json, changed, as bytes."""
    with open(os.path.join(HERE, TINY, "tokenizer.json"), "rb") as f:
        tok = json.loads(f.read().decode("utf-8"))
    change(tok)
    return json.dumps(tok, ensure_ascii=False).encode("utf-8")


def safetensors(header_text, data):
    """A safetensors file of that header text (bytes) and data."""
    return struct.pack("<Q", len(header_text)) + header_text + data


def tok_case(name, change, prefix=b""):
    d = folder(name, ["config.json", "model.safetensors"])
    write(d, "tokenizer.json", prefix + tokenizer(change))


def st_case(name, header_text, data):
    d = folder(name, ["config.json"])
    write(d, "model.safetensors", safetensors(header_text, data))


def vocab_set(piece, id_):
    def change(tok):
        tok["model"]["vocab"][piece] = id_
    return change


def empty_piece(tok):
    v = tok["model"]["vocab"]
    last = max(v, key=v.get)
    del v[last]
    v[""] = 319
    tok["added_tokens"] = [{"id": 319, "content": "<|x|>", "single_word":
                            False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True}]


def nul_added(tok):
    tok["added_tokens"] = [{"id": 320, "content": "\u0000", "single_word":
                            False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True}]


tok_case("bad-tok-id-past", vocab_set("\u0120computing", 320))
tok_case("bad-tok-id-large", vocab_set("\u0120computing", 100000))
tok_case("bad-tok-empty", empty_piece)
tok_case("bad-tok-nul", nul_added)
tok_case("bad-tok-bom", lambda tok: None, BOM)
d = folder("bad-tok-id-real", ["config.json", "model.safetensors"])
text = tokenizer(lambda tok: None)
piece = '"\u0120computing": '.encode("utf-8")
at = text.index(piece) + len(piece)
end = at
while text[end:end + 1].isdigit():
    end += 1
write(d, "tokenizer.json", text[:end] + b".0" + text[end:])

ONE = b'{"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}}'
st_case("bad-st-metadata-only", b'{"__metadata__":{"format":"pt"}}', b"")
st_case("bad-st-bom", BOM + ONE, bytes(8))
st_case("bad-st-nul-name",
        b'{"wte.weight\\u0000x":{"dtype":"F16","shape":[4],'
        b'"data_offsets":[0,8]}}', bytes(8))
st_case("bad-st-nul-dtype",
        b'{"a":{"dtype":"F16\\u0000x","shape":[4],"data_offsets":[0,8]}}',
        bytes(8))
st_case("bad-st-shape-real",
        b'{"a":{"dtype":"F16","shape":[4.0],"data_offsets":[0,8]}}',
        bytes(8))
st_case("bad-st-offset-exp",
        b'{"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8e0]}}',
        bytes(8))

d = folder("bad-index-bom", ["config.json"])
write(d, "model.safetensors.index.json", BOM +
      b'{"metadata":{"total_size":8},"weight_map":'
      b'{"a":"model.safetensors"}}')
d = folder("bad-index-nul-shard", ["config.json"])
write(d, "model.safetensors.index.json",
      b'{"metadata":{"total_size":8},"weight_map":'
      b'{"a":"model.safetensors\\u0000.txt"}}')
d = folder("bad-index-total-real", ["config.json"])
write(d, "model.safetensors.index.json",
      b'{"metadata":{"total_size":20480.0},"weight_map":'
      b'{"wte.weight":"model-00001-of-00001.safetensors"}}')

d = folder("bad-vocab-config", ["model.safetensors", "tokenizer.json"])
with open(os.path.join(HERE, TINY, "config.json")) as f:
    cfg = json.load(f)
cfg["vocab_size"] = 300
write(d, "config.json", (json.dumps(cfg, indent=2) + "\n").encode())
