// vs-node-llama-cpp.mjs NPMDIR KVFIT GGUFDIR: kvfit's llama.cpp rules
// (--engine llamacpp) held to llama.cpp itself, the build node-llama-cpp
// ships (its llama/llama.cpp.info.json names the release). Each case makes
// a llama.cpp context on the CPU and reads what llama.cpp logs of it: each
// KV cache's cells, streams and layers (llama_kv_cache: size = ...), a
// Mamba state's (llama_memory_recurrent: size = ...), its compute buffer,
// and from the model's load the K/V width of every layer and which slide.
// Its bytes, exactly: a cache's cells x streams x the K and V rows of its
// layers (f16: 2 bytes a value), a state's cells x its layers x (conv +
// ssm state) x 4 (llama-hparams.cpp n_embd_r, n_embd_s); each held to the
// MiB llama.cpp prints to two decimals, and the compute buffer is what
// its memory breakdown (llama_context::memory_breakdown, exact bytes)
// holds beyond them. kvfit on the same file, context, sequences and
// n_ubatch must print those KV bytes exactly (kv_bytes, its sequences
// capped at the context's) and the compute buffer (activation_bytes)
// within TOLERANCE. The tiny models load through node-llama-cpp's
// public API with their data, and each runs a short prompt once; the real
// shapes, whose data is a hole, through its own no_alloc path (the one its
// estimator uses), which sizes everything and allocates nothing. Not
// checked: --kv-unified (node-llama-cpp gives every sequence a stream of
// its own). One line a case on stdout; exit 1 on any difference.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [npmDir, kvfit, dir] = process.argv.slice(2);
const nlc = resolve(npmDir, "node_modules", "node-llama-cpp");
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(join(nlc, "dist", "index.js")).href);
const release = JSON.parse(readFileSync(join(nlc, "llama", "llama.cpp.info.json")));
const version = JSON.parse(readFileSync(join(nlc, "package.json"))).version;

// kvfit's compute buffer against llama.cpp's: at most this far either way
const TOLERANCE = 0.15;
const MiB = 1024 * 1024;

// [model, context per sequence, sequences, options], a model's cases
// together (each loads once): each tiny model at one sequence and at four
// streams of a context that is no multiple of 256, sliding ones under
// --swa-full too; the real shapes short and long, n_ubatch other than
// 512 among them
const more = {
	"tiny-llama": [[8192, 2]],
	"tiny-gemma2": [[2048, 3, { swaFull: true }]],
	"tiny-gemma3": [[3000, 2]],
	"tiny-gpt-oss": [[4096, 1, { swaFull: true }]],
	"real-llama-3.1-8b": [[8192, 2, { ubatch: 2048 }]],
	"real-gemma-3-27b": [[16384, 1, { ubatch: 256 }]],
	"real-gpt-oss-20b": [[131072, 1, { swaFull: true }]],
};
const cases = [];
for (const m of ["llama", "qwen3", "qwen3moe", "gemma2", "gemma3", "cohere2",
		 "gpt-oss", "jamba", "falcon-h1"])
	for (const c of [[4096, 1], [1000, 4], ...(more[`tiny-${m}`] ?? [])])
		cases.push([`tiny-${m}`, ...c]);
for (const m of ["llama-3.1-8b", "qwen3-30b-a3b", "gemma-3-27b", "gpt-oss-20b"])
	for (const c of [[4096, 1], [32768, 4], ...(more[`real-${m}`] ?? [])])
		cases.push([`real-${m}`, ...c]);

let lines = [];
const llama = await getLlama({
	gpu: false, build: "never", progressLogs: false, logLevel: LlamaLogLevel.debug,
	logger: (level, text) => lines.push(...text.split("\n")),
});

// Waits until llama.cpp's log (delivered asynchronously) holds a line
// matching re.
async function settle(re) {
	for (let i = 0; i < 500 && !lines.some((l) => re.test(l)); i++)
		await new Promise((r) => setTimeout(r, 10));
	return lines.some((l) => re.test(l));
}

// print_info's per-layer value: "[64, 64, 0]" or one number for all
function perLayer(key, n) {
	const l = lines.find((x) => new RegExp(`print_info: ${key}\\s+=`).test(x));
	if (!l) return null;
	const v = l.split("=")[1].trim();
	const a = v.startsWith("[") ? JSON.parse(v) : Array(n).fill(Number(v));
	return a.length === n ? a : null;
}

function num(re) {
	const l = lines.find((x) => re.test(x));
	return l ? Number(l.match(re)[1]) : null;
}

// What the model's load logged: each layer's K and V width, whether it
// slides, and the Mamba widths
function readModel() {
	const n = num(/print_info: n_layer\s+=\s+(\d+)/);
	const m = { n, k: perLayer("n_embd_k_gqa", n), v: perLayer("n_embd_v_gqa", n),
		    kv: perLayer("n_head_kv", n), swa: Array(n).fill(0) };
	for (const l of lines) {
		const r = l.match(/layer\s+(\d+) assigned to device \S+, is_swa = (\d)/);
		if (r && +r[1] < n) m.swa[+r[1]] = +r[2];
	}
	const conv = num(/ssm_d_conv\s+=\s+(\d+)/), inner = num(/ssm_d_inner\s+=\s+(\d+)/);
	const state = num(/ssm_d_state\s+=\s+(\d+)/), group = num(/ssm_n_group\s+=\s+(\d+)/);
	if (inner) {
		// llama-hparams.cpp: n_embd_r (the convolution's last d_conv - 1
		// columns of x, B and C) and n_embd_s (the SSM state)
		m.rs = (conv - 1) * (inner + 2 * group * state) + state * inner;
	}
	if (!m.k || !m.v || !m.kv) throw new Error("no per-layer K/V widths in llama.cpp's log");
	return m;
}

const TYPE = { f16: 2, f32: 4, bf16: 2 };

// The context's figures from its log lines
function readContext(model, cpuRam) {
	const c = { caches: [], kv: 0, rs: 0 };
	c.seqs = num(/llama_context: n_seq_max\s+=\s+(\d+)/);
	c.ctxSeq = num(/llama_context: n_ctx_seq\s+=\s+(\d+)/);
	c.ubatch = num(/llama_context: n_ubatch\s+=\s+(\d+)/);
	c.computeLog = num(/compute buffer size =\s+([\d.]+) MiB/);
	const kvRe = /llama_kv_cache: size =\s+([\d.]+) MiB \(\s*(\d+) cells,\s+(\d+) layers,\s+(\d+)\/(\d+) seqs\), K \((\w+)\):\s+([\d.]+) MiB, V \((\w+)\):\s+([\d.]+) MiB/;
	const sizes = lines.filter((l) => kvRe.test(l)).map((l) => l.match(kvRe));
	// iSWA logs the non-SWA cache first, then the SWA one
	const slides = lines.some((l) => /creating\s+SWA KV cache/.test(l));
	sizes.forEach((r, i) => {
		const swa = slides && i === 1 ? 1 : 0;
		const layers = [];
		for (let il = 0; il < model.n; il++)
			if (model.kv[il] > 0 && model.swa[il] === swa) layers.push(il);
		const cells = +r[2], streams = +r[5];
		const k = layers.reduce((s, il) => s + model.k[il], 0) * TYPE[r[6]];
		const v = layers.reduce((s, il) => s + model.v[il], 0) * TYPE[r[8]];
		const bytes = cells * streams * (k + v);
		const cache = { cells, streams, layers: layers.length, bytes, swa };
		if (layers.length !== +r[3])
			cache.bad = `${layers.length} layers by the per-layer log, ${r[3]} in its cache`;
		else if (Math.abs(cells * streams * k / MiB - r[7]) > 0.005 ||
			 Math.abs(cells * streams * v / MiB - r[9]) > 0.005)
			cache.bad = `${(bytes / MiB).toFixed(4)} MiB by its cells, its log ${r[1]} MiB`;
		c.caches.push(cache);
		c.kv += bytes;
	});
	const rsRe = /llama_memory_recurrent: size =\s+([\d.]+) MiB \(\s*(\d+) cells,/;
	const rs = lines.find((l) => rsRe.test(l));
	if (rs) {
		const [, mib, cells] = rs.match(rsRe);
		// the Mamba layers: as many as the MiB it prints hold
		const per = cells * model.rs * 4;
		const layers = Math.round(mib * MiB / per);
		c.rs = layers * per;
		c.caches.push({ cells: +cells, streams: 1, layers, bytes: c.rs, state: true,
				bad: Math.abs(c.rs / MiB - mib) > 0.005 ? `state ${mib} MiB, ${c.rs} bytes by its cells` : null });
	}
	c.compute = cpuRam - c.kv - c.rs;
	if (c.computeLog === null || Math.abs(c.compute / MiB - c.computeLog) > 0.005)
		c.bad = `compute buffer ${c.computeLog} MiB in its log, ${c.compute} bytes by its memory breakdown`;
	return c;
}

function kvfitRow(file, ctx, seqs, ubatch, swaFull) {
	const args = [file, "--engine", "llamacpp", "-m", "8TiB", "--ctx", String(ctx),
		      "--max-num-seqs", String(seqs), "--max-num-batched-tokens", String(ubatch),
		      "-o", "tsv"];
	if (swaFull) args.push("--swa-full");
	const out = execFileSync(kvfit, args, { encoding: "utf8" }).trim().split("\n");
	const head = out[0].split("\t"), row = out[1].split("\t");
	const get = (k) => Number(row[head.indexOf(k)]);
	return { users: get("users_whole"), kv: get("kv_bytes"), act: get("activation_bytes") };
}

// llama.cpp runs the model in context c: a short prompt, and the odds of
// the token it picks next must be a number above 0 (random weights: about
// 1 / vocab), not NaN
let decoded = 0;
async function decodes(name, model, c) {
	const seq = c.getSequence();
	const prompt = model.tokenize("the quick brown fox");
	for await (const o of seq.evaluateWithMetadata(prompt, { confidence: true })) {
		if (!(o.confidence > 0)) {
			console.log(`vs-node-llama-cpp: ${name}: llama.cpp's next token has odds ${o.confidence}`);
			fail = 1;
		}
		decoded++;
		break;
	}
}

const B = llama._bindings;
let fail = 0, worst = 0, kvSame = 0;
const models = new Map();
console.log(`# llama.cpp ${release.tag} (${release.llamaCppGithubRepo}), node-llama-cpp ${version}, CPU`);
console.log("model\tctx\tseqs\tn_ubatch\tswa_full\tcaches\tkv_bytes\tkvfit_kv_bytes\tcompute_bytes\tkvfit_activation_bytes\tratio");
for (const [name, ctx, seqs, opt = {}] of cases) {
	const file = join(dir, `${name}.gguf`);
	const real = name.startsWith("real-");
	let entry = models.get(name);
	if (!entry) {
		for (const [, e] of models) await e.dispose();
		models.clear();
		lines = [];
		let handle;
		if (real) {
			handle = new B.AddonModel(file, { gpuLayers: 0, noAlloc: true, useMmap: false, useMlock: false });
			if (!await handle.init()) throw new Error(`${name}: llama.cpp did not load it`);
		} else {
			handle = await llama.loadModel({ modelPath: file, gpuLayers: 0 });
		}
		await settle(/print_info: n_embd_v_gqa/);
		await settle(/load_tensors: .*assigned to device/);
		await new Promise((r) => setTimeout(r, 50));
		entry = { handle, model: readModel(), dispose: () => handle.dispose() };
		models.set(name, entry);
	}
	lines = [];
	let cpuRam;
	if (real) {
		const c = new B.AddonContext(entry.handle, { contextSize: ctx * seqs,
			batchSize: opt.ubatch ?? 512,
			sequences: seqs, flashAttention: true, swaFullCache: !!opt.swaFull });
		if (!await c.init()) throw new Error(`${name}: no context`);
		cpuRam = c.getMemoryBreakdown().cpuRam;
		await c.dispose();
	} else {
		// node-llama-cpp gives a sliding model's context one more token
		// than the batch it is asked for: 511 makes llama-server's 512
		const swa = entry.handle.fileInsights.swaSize != null && !opt.swaFull;
		const c = await entry.handle.createContext({ contextSize: ctx, sequences: seqs,
			batchSize: swa ? 511 : 512, flashAttention: true, swaFullCache: !!opt.swaFull,
			threads: 1 });
		cpuRam = c._ctx.getMemoryBreakdown().cpuRam;
		if (!await settle(/sched_reserve: .*compute buffer size/))
			throw new Error(`${name}: no compute buffer in llama.cpp's log`);
		await new Promise((r) => setTimeout(r, 20));
		const log = lines;
		lines = [];
		if (!entry.ran) { // once a model
			await decodes(name, entry.handle, c);
			entry.ran = true;
		}
		await c.dispose();
		lines = log;
	}
	if (!await settle(/sched_reserve: .*compute buffer size/))
		throw new Error(`${name}: no compute buffer in llama.cpp's log`);
	await new Promise((r) => setTimeout(r, 20));
	const c = readContext(entry.model, cpuRam);
	const k = kvfitRow(file, ctx, c.seqs, c.ubatch, opt.swaFull);
	const ratio = k.act / c.compute;
	const caches = c.caches.map((x) => `${x.state ? "state" : x.swa ? "swa" : "kv"}:${x.cells}x${x.streams}x${x.layers}`).join(",");
	console.log([name, ctx, c.seqs, c.ubatch, opt.swaFull ? "yes" : "no", caches, c.kv + c.rs, k.kv,
		     c.compute, k.act, ratio.toFixed(3)].join("\t"));
	const say = (what) => { console.log(`vs-node-llama-cpp: ${name} ctx ${ctx} x ${seqs}: ${what}`); fail = 1; };
	for (const x of c.caches) if (x.bad) say(`llama.cpp's log disagrees with itself: ${x.bad}`);
	if (c.bad) say(c.bad);
	if (c.seqs !== seqs || c.ctxSeq % 256) say(`llama.cpp made ${c.seqs} sequences of ${c.ctxSeq} cells`);
	if (k.users !== c.seqs) say(`kvfit fits ${k.users} sequences, not ${c.seqs}`);
	if (k.kv === c.kv + c.rs) kvSame++;
	else say(`KV bytes: kvfit ${k.kv}, llama.cpp ${c.kv + c.rs} (${c.kv + c.rs - k.kv > 0 ? "+" : ""}${c.kv + c.rs - k.kv})`);
	if (Math.abs(ratio - 1) > TOLERANCE) say(`compute buffer: kvfit ${k.act}, llama.cpp ${c.compute}: ${ratio.toFixed(3)}x`);
	worst = Math.max(worst, Math.abs(ratio - 1));
}
for (const [, e] of models) await e.dispose();
await llama.dispose();
console.log(`# ${cases.length} contexts, ${kvSame} with the same KV bytes; compute buffer within ${(worst * 100).toFixed(1)}% (tolerance ${TOLERANCE * 100}%); ${decoded} models run`);
process.exit(fail);
