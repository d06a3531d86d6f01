#!/usr/bin/env node
// aic-tables.mjs SYSTEMS OUT: writes the five tab-separated tables that
// scripts/efficiency-from-aic reads (aic_gemm.tsv, aic_attn_decode.tsv,
// aic_attn_prefill.tsv, aic_allreduce.tsv, aic_moe.tsv) into the folder
// OUT, from the per-operation measurements NVIDIA's aiconfigurator
// collects: SYSTEMS is its aic-core/src/aiconfigurator_core/systems folder
// (github.com/ai-dynamo/aiconfigurator, commit 095f58a5), holding each
// GPU's <gpu>.yaml and data/<gpu>/<family>/<backend>/<version>/*.parquet.
//
// The parquet files are read with the npm packages hyparquet and
// hyparquet-compressors (snappy, zstd); install them once into a folder
// and name it in NODE_PATH:
//
//   npm install --prefix DIR hyparquet hyparquet-compressors
//   NODE_PATH=DIR/node_modules node scripts/aic-tables.mjs \
//       AIC/aic-core/src/aiconfigurator_core/systems /tmp/aic
//   scripts/efficiency-from-aic /tmp/aic > configs/efficiency.json
//
// The GPU's peaks are its <gpu>.yaml's (mem_bw, bfloat16_tc_flops,
// fp8_tc_flops, fp4_tc_flops), the ones efficiency-from-aic's PEAKS
// copies. One TensorRT-LLM release (gemm, attention, comm, moe) and one
// vLLM release (attention) a GPU, VERSIONS below: the newest whose folder
// holds the GPU's own tables (not a reuse.yaml naming another release's).
// A point measured twice, or by two kernels, is the faster. Latencies are
// aiconfigurator's, milliseconds. What each table keeps:
//
//   aic_gemm.tsv   gpu backend data_version dtype M N K latency_ms
//                  gemm_perf: bfloat16, fp8 (per tensor) and nvfp4 where
//                  the GPU has the format's peak; weights N x K of 4096 x
//                  4096, 16384 x 4096, 4096 x 16384 and 8192 x 8192; M =
//                  1, 2, 4 ... 16384 tokens
//   aic_attn_decode.tsv
//                  gpu backend data_version kernel_source kv_dtype
//                  n_q_heads n_kv_heads head_dim batch kv_len latency_ms
//                  kv_MB bw_frac flag
//                  generation_attention_perf: 32 query and 8 KV heads of
//                  128 (Llama 3 8B's), no sliding window; batch 1, 8, 32,
//                  128, 512 by kv_len 1024, 4096, 16384, 65536 where
//                  measured; bfloat16 and fp8 caches. TensorRT-LLM's own
//                  kernels (torch_flow); vLLM's the kernel most of the
//                  shape's rows were timed with (FlashAttention 3 on
//                  Hopper, FlashInfer's TensorRT-LLM decode on Blackwell,
//                  FlashInfer on Ada). kv_len = isl + step, the tokens
//                  cached (aiconfigurator's step = kv_len - 1, isl = 1);
//                  kv_MB = the cache read, batch x kv_len x 2 (K and V)
//                  x n_kv_heads x head_dim x the format's bytes, 10^6
//                  bytes; bw_frac = those bytes / latency / mem_bw; flag
//                  "suspect" on every row of a table where a cache of 1
//                  GB or more (larger than any L2) reads faster than the
//                  memory (A100's under TensorRT-LLM 1.0.0: 1.2 to 1.6
//                  times its peak), "above_peak" where bw_frac passes 1
//                  alone (a small cache in L2), else "-"
//   aic_attn_prefill.tsv
//                  gpu backend data_version kernel_source attn_dtype
//                  kv_dtype n_q_heads n_kv_heads head_dim batch seq_len
//                  latency_ms eff_causal
//                  context_attention_perf: the same heads and kernels;
//                  attention and cache formats bf16/bf16, bf16/fp8,
//                  fp8/fp8; batch 1 and 8; seq_len = isl, 256, 1024,
//                  2048, 4096, 8192, 16384; and, for the head size's
//                  effect, bf16/bf16 at batch 1 of the other shapes in
//                  PREFILL_HEADS (heads of 64, 128 and 256 values, 32
//                  query over 8 KV heads and 16 over 4), by the same
//                  kernel; eff_causal = causal
//                  attention's FLOPs, 2 x batch x n_q_heads x head_dim x
//                  seq_len^2 (Q.K and P.V, 2 x seq_len^2 x head_dim
//                  each, half of them under the mask), / latency / the
//                  attention format's peak (bfloat16_tc_flops; fp8's for
//                  fp8 attention)
//   aic_allreduce.tsv
//                  gpu impl data_version tp msg_bytes latency_ms
//                  comm/trtllm custom_allreduce_perf in bfloat16 (impl
//                  trtllm_custom), every GPU count measured; msg_bytes =
//                  message_size (elements) x 2, 512 B x 4^i up to 512
//                  MiB
//   aic_moe.tsv    gpu backend data_version kernel_source dtype model
//                  hidden inter topk n_experts moe_tp moe_ep num_tokens
//                  tokens_per_local_expert_balanced latency_ms_balanced
//                  latency_ms_powerlaw1.01 eff_basis achieved_tflops
//                  peak_tflops flops_eff active_weight_bw_frac
//                  moe_perf (gated experts, not the min-latency kernels):
//                  Mixtral 8x7B, Qwen3-30B-A3B and DeepSeek V3 on 8
//                  expert-parallel ranks in bfloat16, fp8, fp8_block,
//                  nvfp4; gpt-oss 20B and 120B in w4a16_mxfp4 and
//                  w4a8_mxfp4_mxfp8; where the GPU has the format's peak;
//                  1, 4, 16 ... 16384 tokens; the latency with tokens
//                  routed evenly (balanced) and by aiconfigurator's power
//                  law 1.01, empty where not measured (A100 has only the
//                  power laws); tokens_per_local_expert = num_tokens x
//                  topk / n_experts; eff_basis the routing the last four
//                  columns use (balanced where measured); achieved_tflops
//                  = the rank's FLOPs, num_tokens x topk / moe_ep x 6 x
//                  hidden x inter / moe_tp, / latency; peak_tflops the
//                  format's peak (bf16 for w4a16, fp8 for fp8_block and
//                  w4a8); flops_eff their ratio; active_weight_bw_frac =
//                  the weights of the experts the rank's tokens touch,
//                  min(n_experts / moe_ep, max(1, num_tokens x topk /
//                  moe_ep)) x 3 x hidden x inter / moe_tp x the format's
//                  bytes (2, 1, nvfp4 0.5, mxfp4 17/32), / latency /
//                  mem_bw
//
// Numbers are written to 4 significant digits, to 0.1 from 100 up.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import fs from 'node:fs'
import path from 'node:path'

// TensorRT-LLM (gemm, attention, comm, moe) and vLLM (attention)
// releases read, per GPU
const VERSIONS = {
  h100_sxm: { trtllm: '1.3.0rc20', vllm: '0.24.0' },
  h200_sxm: { trtllm: '1.3.0rc20', vllm: '0.24.0' },
  a100_sxm: { trtllm: '1.0.0', vllm: '0.14.0' },
  b200_sxm: { trtllm: '1.3.0rc20', vllm: '0.24.0' },
  gb200: { trtllm: '1.3.0rc20', vllm: '0.24.0' },
  l40s: { trtllm: '1.3.0rc20', vllm: '0.24.0' },
  rtx_pro_6000_server: { trtllm: '1.3.0rc20', vllm: '0.24.0' },
  b300_sxm: { trtllm: '1.3.0rc20', vllm: '0.24.0' },
  gb300: { trtllm: '1.3.0rc20', vllm: '0.24.0' },
}
const GEMM_DTYPES = ['bfloat16', 'fp8', 'nvfp4']
const GEMM_NK = [[4096, 4096], [16384, 4096], [4096, 16384], [8192, 8192]]
const GEMM_M = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
  16384]
// the format's peak in peaks() below
const PEAK_KEY = { bfloat16: 'bf16', fp8: 'fp8', fp8_block: 'fp8',
  nvfp4: 'fp4', w4a16_mxfp4: 'bf16', w4a8_mxfp4_mxfp8: 'fp8' }
const HEADS = { q: 32, kv: 8, dim: 128 }
const KV_BYTES = { bfloat16: 2, fp8: 1 }
const DECODE_BATCH = [1, 8, 32, 128, 512]
const DECODE_KV = [1024, 4096, 16384, 65536]
const PREFILL_DTYPES = [['bfloat16', 'bfloat16'], ['bfloat16', 'fp8'],
  ['fp8', 'fp8']]
const PREFILL_BATCH = [1, 8]
const PREFILL_SEQ = [256, 1024, 2048, 4096, 8192, 16384]
// q heads, kv heads, head_dim: the shapes beside HEADS whose prefill
// rows say what a head of 64 or 256 values costs against one of 128
const PREFILL_HEADS = [[32, 8, 64], [32, 8, 256], [16, 4, 64],
  [16, 4, 128], [16, 4, 256]]
const AR_BYTES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => 512 * 4 ** i)
// name: hidden, inter, topk, experts, moe_tp, moe_ep
const MOE_MODELS = {
  'Mixtral-8x7B': [4096, 14336, 2, 8, 1, 1],
  'Qwen3-30B-A3B': [2048, 768, 8, 128, 1, 1],
  'DeepSeek-V3_ep8': [7168, 2048, 8, 256, 1, 8],
}
const MOE_MX = {
  'GPT-OSS-20B': [2880, 2880, 4, 32, 1, 1],
  'GPT-OSS-120B': [2880, 2880, 4, 128, 1, 1],
}
const MOE_DTYPES = ['bfloat16', 'fp8', 'fp8_block', 'nvfp4', 'w4a16_mxfp4',
  'w4a8_mxfp4_mxfp8']
const MOE_TOKENS = [1, 4, 16, 64, 256, 1024, 4096, 16384]
// not the gated SwiGLU experts the models run, or not the kernel serving
// runs at every batch
const MOE_SKIP = ['moe_torch_flow_nongated', 'moe_torch_flow_min_latency']
const MOE_BYTES = { bfloat16: 2, fp8: 1, fp8_block: 1, nvfp4: 0.5,
  w4a16_mxfp4: 17 / 32, w4a8_mxfp4_mxfp8: 17 / 32 }

async function need(name) {
  for (const d of (process.env.NODE_PATH || '').split(path.delimiter)) {
    if (!d) continue
    try {
      const file = createRequire(path.join(d, 'x.js')).resolve(name)
      return await import(pathToFileURL(file).href)
    } catch (e) { /* the next folder */ }
  }
  return import(name)
}

const { asyncBufferFromFile, parquetReadObjects } = await need('hyparquet')
const { compressors } = await need('hyparquet-compressors')

async function parquet(file) {
  if (!fs.existsSync(file)) return []
  const rows = await parquetReadObjects({
    file: await asyncBufferFromFile(file), compressors })
  for (const r of rows)
    for (const k in r)
      if (typeof r[k] === 'bigint') r[k] = Number(r[k])
  return rows
}

// the GPU's peaks from systems/<gpu>.yaml: 10^12 FLOP/s and 10^9 B/s
function peaks(systems, gpu) {
  const text = fs.readFileSync(path.join(systems, gpu + '.yaml'), 'utf8')
  const num = (key) => {
    const m = text.match(new RegExp('^\\s*' + key + ':\\s*([0-9.eE+]+)', 'm'))
    return m ? Number(m[1]) : undefined
  }
  const p = { bw: num('mem_bw') / 1e9, bf16: num('bfloat16_tc_flops') / 1e12 }
  if (num('fp8_tc_flops')) p.fp8 = num('fp8_tc_flops') / 1e12
  if (num('fp4_tc_flops')) p.fp4 = num('fp4_tc_flops') / 1e12
  return p
}

function fmt(x) {
  if (x === undefined || x === null || x === '') return ''
  if (typeof x !== 'number') return String(x)
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x)
  if (Math.abs(x) >= 100) return x.toFixed(1)
  return String(Number(x.toPrecision(4)))
}

function writer(file, cols) {
  const lines = [cols.join('\t')]
  return {
    add(row) { lines.push(row.map(fmt).join('\t')) },
    close() { fs.writeFileSync(file, lines.join('\n') + '\n') },
  }
}

function dir(systems, gpu, family, backend, version) {
  return path.join(systems, 'data', gpu, family, backend, version)
}

// the least latency of each key's rows (a point measured twice, or by
// two kernels: the faster)
function fastest(rows, key) {
  const m = new Map()
  for (const r of rows) {
    const k = key(r)
    const was = m.get(k)
    if (!was || r.latency < was.latency) m.set(k, r)
  }
  return m
}

async function gemm(out, systems, gpu, p, v) {
  const rows = await parquet(path.join(dir(systems, gpu, 'gemm', 'trtllm',
    v.trtllm), 'gemm_perf.parquet'))
  const best = fastest(rows, (r) => [r.gemm_dtype, r.m, r.n, r.k].join())
  for (const dt of GEMM_DTYPES) {
    if (!p[PEAK_KEY[dt]]) continue
    for (const [n, k] of GEMM_NK)
      for (const m of GEMM_M) {
        const r = best.get([dt, m, n, k].join())
        if (r) out.add([gpu, 'trtllm', v.trtllm, dt, m, n, k, r.latency])
      }
  }
}

function ours(r) {
  return r.num_heads === HEADS.q && r.num_key_value_heads === HEADS.kv &&
    r.head_dim === HEADS.dim && !r.window_size
}

// TensorRT-LLM's own kernels (torch_flow); vLLM's the kernel most of the
// shape's rows were measured with (FlashAttention 3 on Hopper,
// FlashInfer's TensorRT-LLM decode on Blackwell...)
function kernel(rows, backend) {
  if (backend === 'trtllm') return 'torch_flow'
  const n = new Map()
  for (const r of rows) n.set(r.kernel_source, (n.get(r.kernel_source) || 0) + 1)
  let best
  for (const [k, c] of n) if (best === undefined || c > n.get(best)) best = k
  return best
}

// an attention table's rows of our heads, by the backend's kernel: the
// kernel, and the fastest row of each key
async function attention(systems, gpu, backend, version, table, key,
  also = () => false) {
  const file = path.join(dir(systems, gpu, 'attention', backend, version),
    table + '.parquet')
  const all = await parquet(file)
  const rows = all.filter(ours)
  const ks = kernel(rows, backend)
  const mine = (r) => r.kernel_source === ks && (ours(r) || also(r))
  return { ks, best: fastest(all.filter(mine), key) }
}

async function decode(out, systems, gpu, p, backend, version) {
  const { ks, best } = await attention(systems, gpu, backend, version,
    'generation_attention_perf',
    (r) => [r.kv_cache_dtype, r.batch_size, r.isl + r.step].join())
  const pts = []
  for (const dt of Object.keys(KV_BYTES))
    for (const b of DECODE_BATCH)
      for (const kv of DECODE_KV) {
        const r = best.get([dt, b, kv].join())
        if (!r) continue
        const bytes = b * kv * 2 * HEADS.kv * HEADS.dim * KV_BYTES[dt]
        pts.push([r, dt, b, kv, bytes, bytes / (r.latency * 1e-3) / (p.bw * 1e9)])
      }
  // a cache too large for any L2 (1 GB and more) read faster than the
  // memory: the table's timings are not to be trusted, all of them
  const suspect = pts.some(([, , , , bytes, frac]) => bytes >= 1e9 && frac > 1)
  for (const [r, dt, b, kv, bytes, frac] of pts)
    out.add([gpu, backend, version, ks, dt, HEADS.q, HEADS.kv, HEADS.dim, b,
      kv, r.latency, bytes / 1e6, frac,
      suspect ? 'suspect' : frac > 1 ? 'above_peak' : '-'])
}

async function prefill(out, systems, gpu, p, backend, version) {
  const shape = (r) => PREFILL_HEADS.some(([q, kv, d]) => r.num_heads === q &&
    r.num_key_value_heads === kv && r.head_dim === d && !r.window_size)
  const { ks, best } = await attention(systems, gpu, backend, version,
    'context_attention_perf',
    (r) => [r.num_heads, r.num_key_value_heads, r.head_dim, r.attn_dtype,
      r.kv_cache_dtype, r.batch_size, r.isl].join(), shape)
  const row = (q, kv, d, ad, kd, b, s) => {
    const r = best.get([q, kv, d, ad, kd, b, s].join())
    if (!r) return
    const flops = 2 * b * q * d * s * s
    const peak = ad === 'fp8' ? p.fp8 : p.bf16
    out.add([gpu, backend, version, ks, ad, kd, q, kv, d, b, s, r.latency,
      flops / (r.latency * 1e-3) / (peak * 1e12)])
  }
  for (const [ad, kd] of PREFILL_DTYPES)
    for (const b of PREFILL_BATCH)
      for (const s of PREFILL_SEQ)
        row(HEADS.q, HEADS.kv, HEADS.dim, ad, kd, b, s)
  for (const [q, kv, d] of PREFILL_HEADS)
    for (const s of PREFILL_SEQ)
      row(q, kv, d, 'bfloat16', 'bfloat16', 1, s)
}

async function allreduce(out, systems, gpu, v) {
  const rows = (await parquet(path.join(dir(systems, gpu, 'comm', 'trtllm',
    v.trtllm), 'custom_allreduce_perf.parquet')))
    .filter((r) => r.op_name === 'all_reduce' && r.allreduce_dtype === 'bfloat16')
  const at = new Map(rows.map((r) => [[r.num_gpus, r.message_size * 2].join(), r]))
  for (const tp of [...new Set(rows.map((r) => r.num_gpus))].sort((a, b) => a - b))
    for (const bytes of AR_BYTES) {
      const r = at.get([tp, bytes].join())
      if (r) out.add([gpu, 'trtllm_custom', v.trtllm, tp, bytes, r.latency])
    }
}

async function moe(out, systems, gpu, p, v) {
  const rows = (await parquet(path.join(dir(systems, gpu, 'moe', 'trtllm',
    v.trtllm), 'moe_perf.parquet')))
    .filter((r) => !MOE_SKIP.includes(r.kernel_source))
  const best = fastest(rows, (r) => [r.moe_dtype, r.hidden_size,
    r.inter_size, r.topk, r.num_experts, r.moe_tp_size, r.moe_ep_size,
    r.distribution, r.num_tokens].join())
  for (const dt of MOE_DTYPES) {
    const peak = p[PEAK_KEY[dt]]
    if (!peak) continue
    const models = dt.includes('mxfp4') ? MOE_MX : MOE_MODELS
    for (const [model, [h, inter, k, e, tp, ep]] of Object.entries(models))
      for (const n of MOE_TOKENS) {
        const at = (dist) => best.get([dt, h, inter, k, e, tp, ep, dist, n].join())
        const bal = at('balanced')
        const pow = at('power_law_1.01')
        if (!bal && !pow) continue
        const t = (bal || pow).latency * 1e-3
        const flops = n * k / ep * 6 * h * inter / tp
        const touched = Math.min(e / ep, Math.max(1, n * k / ep))
        const bytes = touched * 3 * h * inter / tp * MOE_BYTES[dt]
        out.add([gpu, 'trtllm', v.trtllm, (bal || pow).kernel_source, dt,
          model, h, inter, k, e, tp, ep, n, n * k / e, bal && bal.latency,
          pow && pow.latency, bal ? 'balanced' : 'power_law_1.01',
          flops / t / 1e12, peak, flops / t / 1e12 / peak,
          bytes / t / (p.bw * 1e9)])
      }
  }
}

async function main() {
  const [systems, outdir] = process.argv.slice(2)
  if (!systems || !outdir) {
    process.stderr.write('usage: aic-tables.mjs SYSTEMS OUT\n')
    process.exit(2)
  }
  fs.mkdirSync(outdir, { recursive: true })
  const o = (name) => path.join(outdir, name)
  const gm = writer(o('aic_gemm.tsv'), ['gpu', 'backend', 'data_version',
    'dtype', 'M', 'N', 'K', 'latency_ms'])
  const dec = writer(o('aic_attn_decode.tsv'), ['gpu', 'backend',
    'data_version', 'kernel_source', 'kv_dtype', 'n_q_heads', 'n_kv_heads',
    'head_dim', 'batch', 'kv_len', 'latency_ms', 'kv_MB', 'bw_frac', 'flag'])
  const pre = writer(o('aic_attn_prefill.tsv'), ['gpu', 'backend',
    'data_version', 'kernel_source', 'attn_dtype', 'kv_dtype', 'n_q_heads',
    'n_kv_heads', 'head_dim', 'batch', 'seq_len', 'latency_ms', 'eff_causal'])
  const ar = writer(o('aic_allreduce.tsv'), ['gpu', 'impl', 'data_version',
    'tp', 'msg_bytes', 'latency_ms'])
  const mo = writer(o('aic_moe.tsv'), ['gpu', 'backend', 'data_version',
    'kernel_source', 'dtype', 'model', 'hidden', 'inter', 'topk',
    'n_experts', 'moe_tp', 'moe_ep', 'num_tokens',
    'tokens_per_local_expert_balanced', 'latency_ms_balanced',
    'latency_ms_powerlaw1.01', 'eff_basis', 'achieved_tflops', 'peak_tflops',
    'flops_eff', 'active_weight_bw_frac'])
  for (const [gpu, v] of Object.entries(VERSIONS)) {
    const p = peaks(systems, gpu)
    await gemm(gm, systems, gpu, p, v)
    for (const [be, version] of [['trtllm', v.trtllm], ['vllm', v.vllm]]) {
      await decode(dec, systems, gpu, p, be, version)
      await prefill(pre, systems, gpu, p, be, version)
    }
    await allreduce(ar, systems, gpu, v)
    await moe(mo, systems, gpu, p, v)
  }
  for (const w of [gm, dec, pre, ar, mo]) w.close()
}

await main()
