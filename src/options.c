/*
 * options.c - the one option table of the four tools. Each row is an
 * option of the tools its mask names: its long name, the letter or key
 * getopt returns, its value's name and its --help text. The same long name
 * may have a row per tool (its help says what it means there) but one key
 * and one letter everywhere; a letter means one option in every tool.
 * Rows without help are the engines' names for our options (vLLM's
 * --tensor-parallel-size), listed in --help's last paragraph.
 * cli_getopt() and cli_help() read the table; test_options holds it to the
 * tools' --help and man pages.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define T_SIZE CLI_KVSIZE
#define T_FIT CLI_KVFIT
#define T_DECODE CLI_KVDECODE
#define T_BENCH CLI_KVBENCH
#define T_ALL (T_SIZE | T_FIT | T_DECODE | T_BENCH)

/* An option of ours. */
#define OPT(tools, name, key, arg, help) \
	{tools, name, key, arg, help, NULL, NULL}
/* An engine's name for one of our options: no help of its own. */
#define ALIAS(tools, name, key, arg, engine, of) \
	{tools, name, key, arg, NULL, engine, of}

const struct cli_opt cli_opts[] = {
	/* kvsize */
	OPT(T_SIZE, "ctx", 'c', "LIST",
	    "context lengths: 8192,8k,128K or lo:hi:xF\n"
	    "(default: 1 and the config's maximum)"),
	OPT(T_SIZE, "kv-dtype", 't', "LIST",
	    "KV storage formats, e.g. bf16,fp8 (default:\n"
	    "auto, the config's torch_dtype)"),
	OPT(T_SIZE, "mha", OPT_MHA, NULL,
	    "as if every query head kept its own K and V"),
	OPT(T_SIZE, "users", 'u', "LIST",
	    "sequences kept at once (default 1)"),
	OPT(T_SIZE, "tp", OPT_TP, "N",
	    "bytes on each of N tensor-parallel GPUs"),
	OPT(T_SIZE, "block-size", 'b', "LIST",
	    "round each sequence up to pages of N tokens\n"
	    "(16,256: a row each)"),
	OPT(T_SIZE, "per-layer", OPT_PER_LAYER, NULL,
	    "one row per layer: kind, tokens kept, bytes"),
	OPT(T_SIZE, "human", 'H', NULL,
	    "sizes in KiB/MiB/GiB instead of bytes"),
	OPT(T_SIZE, "list", OPT_LIST, NULL,
	    "list the configs found, then exit"),
	/* kvfit */
	OPT(T_FIT, "gpu", 'g', "NAME",
	    "a GPU of gpus.json (h100-sxm, a100-80gb, l40s)"),
	OPT(T_FIT, "gpu-file", OPT_GPU_FILE, "FILE",
	    "read the GPUs of --gpu and --list-gpus\n"
	    "from FILE instead of gpus.json (its form;\n"
	    "kvbench writes one of this machine)"),
	OPT(T_FIT, "gpu-mem", 'm', "SIZE",
	    "memory of one GPU (80GB, 80GiB)"),
	OPT(T_FIT, "wired-limit-mb", OPT_WIRED, "N",
	    "a Mac's GPU wired limit in MiB, as sudo\n"
	    "sysctl iogpu.wired_limit_mb=N sets it (0,\n"
	    "the default: macOS's, 2/3 or 3/4 of RAM)"),
	OPT(T_FIT, "bandwidth", OPT_BANDWIDTH, "GBPS",
	    "memory bandwidth, 10^9 B/s (default: --gpu's)"),
	OPT(T_FIT, "tflops", OPT_TFLOPS, "T",
	    "dense FLOP rate of the weights' type, 10^12/s\n"
	    "(default: --gpu's)"),
	OPT(T_FIT, "interconnect", OPT_LINK, "GBPS",
	    "GPU-to-GPU bandwidth of one GPU, one\n"
	    "direction, 10^9 B/s (default: --gpu's)"),
	OPT(T_FIT, "allreduce-latency", OPT_AR_LATENCY, "US",
	    "microseconds of one all-reduce beside its\n"
	    "bytes (default: NCCL's model for --gpu's\n"
	    "links; 0: none)"),
	OPT(T_FIT, "bw-efficiency", OPT_BW_EFF, "F",
	    "fraction of the bandwidth a step reaches,\n"
	    "(0,1] (default: the GPU file's, else 1)"),
	OPT(T_FIT, "flops-efficiency", OPT_FLOPS_EFF, "F",
	    "fraction of the FLOP rate products reach,\n"
	    "(0,1] (default: the GPU file's, else 1)"),
	OPT(T_FIT, "decode-tflops", OPT_DEC_TFLOPS, "T",
	    "FLOP rate of a decode step of several\n"
	    "users' products, 10^12/s (default: the GPU\n"
	    "file's, else --tflops x --flops-efficiency)"),
	OPT(T_FIT, "serial-fraction", OPT_SERIAL, "F",
	    "share of those products' shorter side\n"
	    "that does not overlap the longer, [0,1]\n"
	    "(default: the GPU file's, else 0)"),
	OPT(T_FIT, "weights", 'w', "SIZE",
	    "weight bytes of the whole model (default:\n"
	    "parameters x --weights-dtype)"),
	OPT(T_FIT, "weights-dtype", OPT_WDTYPE, "T",
	    "bf16, fp8, int8, int4, ..., or mxfp4, nvfp4,\n"
	    "int4-g128 (default: what the checkpoint\n"
	    "stores)"),
	OPT(T_FIT, "reserve", 'r', "SIZE",
	    "kept back per GPU for activations, runtime\n"
	    "(default: the engine's, modelled)"),
	OPT(T_FIT, "util", OPT_UTIL, "F",
	    "fraction of memory the engine may use, (0,1]"),
	OPT(T_FIT, "tp", OPT_TP, "N",
	    "tensor-parallel GPUs (heads split)"),
	OPT(T_FIT, "pp", OPT_PP, "N",
	    "pipeline stages (layers split)"),
	OPT(T_FIT, "dp", OPT_DP, "N",
	    "MoE: attention data-parallel, N groups of\n"
	    "--tp GPUs, each its own sequences and KV\n"
	    "(vLLM's form; users are all the groups')"),
	OPT(T_FIT, "dp-attention", OPT_DP_ATTN, NULL,
	    "the --dp groups within the --tp GPUs, tp/dp\n"
	    "each (SGLang's, TensorRT-LLM's form;\n"
	    "without --dp every GPU its own)"),
	OPT(T_FIT, "ep", OPT_EP, "N",
	    "MoE: expert parallelism, the routed experts\n"
	    "over N of a stage's tp x dp GPUs, E/N each"),
	OPT(T_FIT, "ep-imbalance", OPT_EP_IMBALANCE, "F",
	    "the busiest expert rank's tokens over the\n"
	    "mean, >= 1 (default 1: balanced)"),
	OPT(T_FIT, "ctx", 'c', "LIST",
	    "tokens per sequence: 8192,8k,128K or lo:hi:xF\n"
	    "(default: the config's maximum)"),
	OPT(T_FIT, "kv-dtype", 't', "LIST",
	    "KV formats, e.g. bf16,fp8 (default: auto)"),
	OPT(T_FIT, "kv-memory", OPT_KV_MEMORY, "SIZE",
	    "KV bytes per GPU, as an engine's log gives\n"
	    "them (vLLM's \"Available KV cache memory\")"),
	OPT(T_FIT, "max-num-batched-tokens", OPT_BATCHED, "N",
	    "tokens one step schedules (default: the\n"
	    "engine's; vLLM's and SGLang's by GPU,\n"
	    "llama.cpp's n_ubatch)"),
	OPT(T_FIT, "max-num-seqs", OPT_SEQS, "N",
	    "sequences running at once, the cap on users\n"
	    "(default: the engine's; vLLM's by GPU)"),
	OPT(T_FIT, "kv-unified", OPT_KV_UNIFIED, NULL,
	    "llama.cpp: one cache stream for every\n"
	    "sequence (default: one each, as -np N)"),
	OPT(T_FIT, "max-attention-window", OPT_ATTN_WINDOW, "LIST",
	    "TensorRT-LLM: each attention layer's window\n"
	    "in turn, repeating (its max_attention_window)"),
	OPT(T_FIT, "swa-full", OPT_SWA_FULL, NULL,
	    "llama.cpp: sliding layers keep the context"),
	OPT(T_FIT, "n-gpu-layers", OPT_NGL, "N",
	    "llama.cpp: layers on the GPU, the last N\n"
	    "(above the layers, the head too), all, or\n"
	    "auto (as llama.cpp's fit picks) (default:\n"
	    "all)"),
	OPT(T_FIT, "override-tensor", OPT_OT, "P=BUF",
	    "llama.cpp: tensors whose name P finds in\n"
	    "BUF, CPU (host memory) or the GPU's\n"
	    "(exps=CPU; a list, repeatable)"),
	OPT(T_FIT, "cpu-moe", OPT_CPU_MOE, NULL,
	    "llama.cpp: every layer's experts in host\n"
	    "memory"),
	OPT(T_FIT, "n-cpu-moe", OPT_N_CPU_MOE, "N",
	    "llama.cpp: the first N layers' experts in\n"
	    "host memory"),
	OPT(T_FIT, "no-kv-offload", OPT_NKVO, NULL,
	    "llama.cpp: every layer's KV in host memory"),
	OPT(T_FIT, "host-mem", OPT_HOST_MEM, "SIZE",
	    "host memory a split's host part must fit\n"
	    "(default: this machine's available)"),
	OPT(T_FIT, "host-bandwidth", OPT_HOST_BW, "GBPS",
	    "host memory bandwidth, 10^9 B/s (default:\n"
	    "--host-profile's, else 60)"),
	OPT(T_FIT, "host-profile", OPT_HOST_PROFILE, "FILE",
	    "a table kvbench's profile of the host wrote:\n"
	    "its bandwidth, FLOP rate and memory"),
	OPT(T_FIT, "users", 'u', "LIST",
	    "sequences of the decode step, a row each\n"
	    "(default: as many as fit); what --solve\n"
	    "needs"),
	OPT(T_FIT, "block-size", 'b', "LIST",
	    "tokens per page, a row each (default: the\n"
	    "engine's)"),
	OPT(T_FIT, "prefix", OPT_PREFIX, "N",
	    "tokens of a prompt shared by every sequence"),
	OPT(T_FIT, "engine", 'e', "NAME",
	    "vllm, sglang, trtllm, llamacpp, ideal (exact\n"
	    "bytes, no engine's rules) or all (default:\n"
	    "vllm)"),
	OPT(T_FIT, "max-loras", OPT_MAX_LORAS, "N",
	    "LoRA: adapters a batch holds, whose slots\n"
	    "the engine keeps beside the weights\n"
	    "(default: the engine's, vLLM 1, SGLang 8)"),
	OPT(T_FIT, "max-lora-rank", OPT_LORA_RANK, "R",
	    "LoRA: the adapters' largest rank\n"
	    "(default: vLLM's 16)"),
	OPT(T_FIT, "max-cpu-loras", OPT_CPU_LORAS, "N",
	    "LoRA: adapters cached in host memory\n"
	    "(default: --max-loras)"),
	OPT(T_FIT, "lora-target-modules", OPT_LORA_MODULES, "LIST",
	    "LoRA: the matrices adapted, q_proj,...,\n"
	    "lm_head or all (default: the engine's)"),
	OPT(T_FIT, "images", OPT_IMAGES, "N",
	    "images each request carries: a vision\n"
	    "tower's weights, its tokens in the prompt,\n"
	    "vLLM's encoder outputs (default 0: none)"),
	OPT(T_FIT, "image-size", OPT_IMAGE_SIZE, "WxH",
	    "each image's pixels, as the model's processor\n"
	    "resizes or tiles it (default: the largest it\n"
	    "keeps)"),
	OPT(T_FIT, "audio-seconds", OPT_AUDIO_SECONDS, "S",
	    "seconds of audio each request carries, one\n"
	    "clip: an audio tower's weights, its tokens in\n"
	    "the prompt, vLLM's encoder outputs (default 0:\n"
	    "none)"),
	OPT(T_FIT, "kv-offload", OPT_KV_OFFLOAD, "SIZE",
	    "host memory for KV of each GPU (64GiB): a\n"
	    "tier beside the GPU's pool"),
	OPT(T_FIT, "prefix-hit", OPT_PREFIX_HIT, "F",
	    "share of a prompt found in a cache tier,\n"
	    "[0,1]: not computed, loaded back (--isl)"),
	OPT(T_FIT, "host-link", OPT_HOST_LINK, "GBPS",
	    "the GPU's link to host memory, one direction,\n"
	    "10^9 B/s: a host tier's loads, a split's\n"
	    "crossings (default: --gpu's, else 32)"),
	OPT(T_FIT, "solve", OPT_SOLVE, "WHAT",
	    "users (default), ctx (longest context for\n"
	    "--users), tp (fewest GPUs for --users),\n"
	    "layers (llama.cpp: most on the GPU), gpus\n"
	    "(fewest for --request-rate in the targets)"),
	OPT(T_FIT, "min-users", OPT_MIN_USERS, "N",
	    "exit 1 when fewer than N sequences fit"),
	OPT(T_FIT, "isl", OPT_ISL, "N",
	    "prompt tokens of a request: times each row\n"
	    "(ttft, tpot, tokens/s; --ctx default isl+osl)"),
	OPT(T_FIT, "arrivals", OPT_ARRIVALS, "HOW",
	    "steady (default: a closed loop, each user's\n"
	    "next request as its last ends) or burst\n"
	    "(requests sent together in waves, as a\n"
	    "benchmark's fixed lengths)"),
	OPT(T_FIT, "request-rate", OPT_RATE, "QPS",
	    "requests a second sent at random (an open\n"
	    "loop): the concurrency it makes, the queue\n"
	    "in ttft; exit 1 when it cannot be served"),
	OPT(T_FIT, "num-prompts", OPT_NUM_PROMPTS, "N",
	    "a burst's requests in all (default 1000, as\n"
	    "vLLM's and SGLang's benchmarks; at least\n"
	    "the users)"),
	OPT(T_FIT, "calibrate", OPT_CALIBRATE, "FILE",
	    "fit the GPU's bandwidth and FLOP fractions\n"
	    "to a serving benchmark's result file (vLLM,\n"
	    "SGLang, genai-perf, aiperf, trtllm-bench;\n"
	    "repeatable)"),
	OPT(T_FIT, "save-gpu", OPT_SAVE_GPU, "FILE",
	    "with --calibrate: write the fit as a GPU\n"
	    "entry for --gpu-file"),
	OPT(T_FIT, "step-us", OPT_STEP_US, "US",
	    "the serving engine's own cost a step\n"
	    "(scheduling, sampling, launches), us\n"
	    "(default: efficiency.json's for it)"),
	OPT(T_FIT, "layer-us", OPT_LAYER_US, "US",
	    "and its own cost a layer of a step, us\n"
	    "(default: efficiency.json's)"),
	OPT(T_FIT, "request-us", OPT_REQUEST_US, "US",
	    "the engine's frontend's serial work a\n"
	    "request (chat template, tokenizer), us; 0\n"
	    "for token ids sent straight to the engine\n"
	    "(default: efficiency.json's for it)"),
	OPT(T_FIT, "osl", OPT_OSL, "N",
	    "output tokens of a request (with --isl)"),
	OPT(T_FIT, "max-ttft", OPT_MAX_TTFT, "MS",
	    "the most users whose time to first token is\n"
	    "within MS; exit 1 when one user misses"),
	OPT(T_FIT, "max-tpot", OPT_MAX_TPOT, "MS",
	    "the same for the time per output token"),
	OPT(T_FIT, "cost-per-hour", OPT_COST, "USD",
	    "a GPU's price an hour: adds dollars per\n"
	    "million output tokens"),
	OPT(T_FIT, "spec-method", OPT_SPEC_METHOD, "HOW",
	    "speculative decoding: draft (a draft model),\n"
	    "eagle, eagle3 (a head), mtp (the model's\n"
	    "own layers) or ngram (no weights)"),
	OPT(T_FIT, "draft", OPT_DRAFT, "CONFIG",
	    "the draft model's or head's config (alone:\n"
	    "--spec-method draft)"),
	OPT(T_FIT, "spec-tokens", OPT_SPEC_TOKENS, "K",
	    "tokens drafted a round, 1 to 64 (vLLM's\n"
	    "num_speculative_tokens, SGLang's\n"
	    "speculative-num-steps)"),
	OPT(T_FIT, "acceptance", OPT_ACCEPT, "A",
	    "chance a drafted token is accepted after\n"
	    "the ones before it, (0,1]"),
	OPT(T_FIT, "acceptance-length", OPT_ACCEPT_LEN, "L",
	    "tokens a round gives, measured (the mean\n"
	    "acceptance length engines print), 1 to K+1"),
	OPT(T_FIT, "params", OPT_PARAMS, NULL,
	    "print parameter counts and weight bytes"),
	OPT(T_FIT, "list-gpus", OPT_LIST_GPUS, NULL,
	    "list the GPUs of gpus.json, then exit"),
	OPT(T_FIT, "human", 'H', NULL,
	    "sizes in KiB/MiB/GiB; on a terminal, a\n"
	    "memory bar per row on stderr"),
	OPT(T_FIT, "flash-attn", OPT_FLASH_ATTN, "on",
	    "llama.cpp: on or auto, as modelled (its\n"
	    "compute buffer with flash attention)"),
	OPT(T_FIT, "enable-lora", OPT_ENABLE_LORA, NULL,
	    "LoRA at the engine's defaults (vLLM's and\n"
	    "SGLang's switch)"),
	OPT(T_FIT, "enable-hierarchical-cache", OPT_HICACHE, NULL,
	    "SGLang: its host tier of KV, at\n"
	    "--hicache-ratio 2 where no size is given"),
	OPT(T_FIT, "batch-size", OPT_N_BATCH, "N",
	    "llama.cpp: its n_batch, above which no\n"
	    "n_ubatch goes (its default 2048)"),
	OPT(T_FIT, "enable-prefix-caching", OPT_PREFIX_CACHING, NULL,
	    "vLLM's switch that shares a prompt's prefix\n"
	    "(--prefix plans the sharing)"),
	OPT(T_FIT, "enable-chunked-prefill", OPT_CHUNKED, NULL,
	    "TensorRT-LLM: its prompts in chunks of\n"
	    "--max-num-batched-tokens beside the decodes\n"
	    "(off by default; vLLM and SGLang always chunk)"),
	OPT(T_FIT, "limit-mm-per-prompt", OPT_LIMIT_MM, "JSON",
	    "vLLM's limit of images a prompt carries,\n"
	    "{\"image\": N}, as --images N"),
	OPT(T_FIT, "speculative-config", OPT_SPEC_CONFIG, "JSON",
	    "vLLM's speculative decoding: its method,\n"
	    "model (--draft) and num_speculative_tokens\n"
	    "(--spec-tokens)"),
	OPT(T_FIT, "disagg", OPT_DISAGG, NULL,
	    "disaggregated prefill and decode workers\n"
	    "(with --isl, --osl): their plan, and the\n"
	    "aggregated one on as many GPUs"),
	OPT(T_FIT, "prefill-tp", OPT_PREFILL_TP, "N",
	    "--disagg: GPUs of a prefill worker, tensor\n"
	    "parallel (default: --tp; with --ep/--dp a\n"
	    "decode worker's GPUs)"),
	OPT(T_FIT, "decode-tp", OPT_DECODE_TP, "N",
	    "--disagg: a decode worker's (default: --tp;\n"
	    "not with --ep/--dp, which shape it)"),
	OPT(T_FIT, "prefill-workers", OPT_PREFILL_WORKERS, "X",
	    "--disagg: prefill workers (default: with\n"
	    "--request-rate the fewest that serve it,\n"
	    "else the xPyD split that balances them)"),
	OPT(T_FIT, "decode-workers", OPT_DECODE_WORKERS, "Y",
	    "--disagg: decode workers (default: alike)"),
	OPT(T_FIT, "kv-link", OPT_KV_LINK, "GBPS",
	    "a decode GPU's link to the prefill workers\n"
	    "(--disagg, --solve gpus), one direction,\n"
	    "10^9 B/s (default: --interconnect's, one\n"
	    "node)"),
	OPT(T_FIT, "max-gpus", OPT_MAX_GPUS, "N",
	    "the most GPUs --solve gpus (and the xPyD\n"
	    "split) may take (default 64)"),
	/* kvdecode */
	OPT(T_DECODE, "prompt", 'p', "N|TEXT",
	    "N tokens drawn from the seed (default 128),\n"
	    "or TEXT, read by the model's tokenizer.json"),
	OPT(T_DECODE, "new", 'n', "N",
	    "tokens to generate (default 32)"),
	OPT(T_DECODE, "users", 'u', "LIST",
	    "sequences decoded together (default 1); a\n"
	    "list (1,4 or 1:16:x2) runs each"),
	OPT(T_DECODE, "layers", OPT_LAYERS, "N",
	    "decoder layers instead of the config's"),
	OPT(T_DECODE, "vocab", OPT_VOCAB, "N",
	    "vocabulary size instead of the config's"),
	OPT(T_DECODE, "kv-heads", OPT_KV_HEADS, "N",
	    "K/V heads instead of the config's (must\n"
	    "divide the attention heads)"),
	OPT(T_DECODE, "mla", OPT_MLA, "RANK",
	    "multi-head latent attention with a latent\n"
	    "of RANK values (DeepSeek configs: their\n"
	    "kv_lora_rank without it)"),
	OPT(T_DECODE, "mla-rope", OPT_MLA_ROPE, "N",
	    "size of MLA's shared rotary key, even\n"
	    "(default: the config's, else half the\n"
	    "head size)"),
	OPT(T_DECODE, "cache", OPT_CACHE, "MODE",
	    "on, off or both (default both; on with a\n"
	    "cache format other than f32)"),
	OPT(T_DECODE, "kv-dtype", 't', "LIST",
	    "the cache's format of K and V: f32, f16,\n"
	    "bf16, fp8, int8, q8_0, q4_0, q4_1 (default\n"
	    "f32); other than f32, the summary compares\n"
	    "the answers with an f32 cache's; a list\n"
	    "with --ppl"),
	OPT(T_DECODE, "k-dtype", OPT_K_DTYPE, "F",
	    "the format of K alone"),
	OPT(T_DECODE, "v-dtype", OPT_V_DTYPE, "F",
	    "the format of V alone"),
	OPT(T_DECODE, "logit-scale", OPT_LOGIT_SCALE, "S",
	    "multiply the logits by S (default 1), so\n"
	    "random weights' flat distributions peak"),
	OPT(T_DECODE, "seed", 's', "N",
	    "seed of weights, prompt and draws\n"
	    "(default 0)"),
	OPT(T_DECODE, "temperature", 'T', "T",
	    "0 picks the likeliest token (default 0)"),
	OPT(T_DECODE, "top-k", 'k', "K",
	    "draw among the K likeliest (default 0: all)"),
	OPT(T_DECODE, "threads", 'j', "LIST",
	    "engine threads (default: online CPUs); a\n"
	    "list runs each"),
	OPT(T_DECODE, "tol", OPT_TOL, "X",
	    "largest logit difference allowed (default\n"
	    "1e-4)"),
	OPT(T_DECODE, "block-size", 'b', "LIST",
	    "cache blocks of N positions (default: one\n"
	    "contiguous run; 16 when paged); a list\n"
	    "runs each"),
	OPT(T_DECODE, "layout", OPT_LAYOUT, "L",
	    "paged (default with blocks) or contiguous"),
	OPT(T_DECODE, "pool-blocks", OPT_POOL_BLOCKS, "N",
	    "blocks in the pool (default: every user's\n"
	    "longest text)"),
	OPT(T_DECODE, "prefix-reuse", OPT_PREFIX_REUSE, NULL,
	    "run requests over one pool: cold, the same\n"
	    "prompt warm, a new tail, a new first token,\n"
	    "the prompt again; a row per request"),
	OPT(T_DECODE, "lengths", OPT_LENGTHS, "DIST",
	    "weigh paged blocks against reserving each\n"
	    "user's longest text: uniform:LO:HI or a\n"
	    "list L1,L2,... of tokens per user"),
	OPT(T_DECODE, "prompt-ids", OPT_PROMPT_IDS, "LIST",
	    "the prompt as token ids (1,5,9), every\n"
	    "sequence's; instead of --prompt N drawn ones"),
	OPT(T_DECODE, "weights-dtype", OPT_WDTYPE, "T",
	    "the weights in memory: f32, bf16 or f16\n"
	    "(default: a checkpoint's own, else f32)"),
	OPT(T_DECODE, "random-weights", OPT_RANDOM_WEIGHTS, NULL,
	    "draw the weights from --seed even where a\n"
	    "checkpoint is beside the config"),
	OPT(T_DECODE, "ppl", OPT_PPL, "FILE",
	    "perplexity of FILE's text with each\n"
	    "--kv-dtype LIST beside an f32 cache"),
	OPT(T_DECODE, "summary", OPT_SUMMARY, "FILE",
	    "also write the summary as a TSV row to FILE"),
	OPT(T_DECODE, "dry-run", OPT_DRY_RUN, NULL,
	    "print the run's plan (bytes, token passes)\n"
	    "as one TSV row, then exit without running"),
	/* kvbench */
	OPT(T_BENCH, "bench", 'B', "LIST",
	    "decode, nocache, attn, batch, membw, sgemm,\n"
	    "quality (default: all but quality, a sweep\n"
	    "of a few minutes)"),
	OPT(T_BENCH, "ctx", 'c', "LIST",
	    "contexts: 8192,8k or lo:hi:xF or lo:hi:+S\n"
	    "(default per bench, see kvbench(1))"),
	OPT(T_BENCH, "kv-heads", OPT_KV_HEADS, "LIST",
	    "K/V heads (default: the model's; attn: H,H/4,1)"),
	OPT(T_BENCH, "mla", OPT_MLA, "LIST",
	    "latent ranks of multi-head latent attention,\n"
	    "or off for the model's own (256,off)"),
	OPT(T_BENCH, "mla-rope", OPT_MLA_ROPE, "N",
	    "size of MLA's shared rotary key (default:\n"
	    "the config's, else half the head size)"),
	OPT(T_BENCH, "users", 'u', "LIST",
	    "sequences per step (default 1; batch: 1,2,4,8)"),
	OPT(T_BENCH, "threads", 'j', "LIST",
	    "threads (default: online CPUs)"),
	OPT(T_BENCH, "kv-dtype", 't', "LIST",
	    "cache formats of attn, decode, batch and\n"
	    "quality: f32, f16, bf16, fp8, int8, q8_0,\n"
	    "q4_0, q4_1 (default f32)"),
	OPT(T_BENCH, "new", 'n', "N",
	    "quality: tokens compared (default 32)"),
	OPT(T_BENCH, "logit-scale", OPT_LOGIT_SCALE, "S",
	    "quality: logits times S (default 1)"),
	OPT(T_BENCH, "random-weights", OPT_RANDOM_WEIGHTS, NULL,
	    "quality: draw the weights from --seed even\n"
	    "where a checkpoint is beside the config"),
	OPT(T_BENCH, "layout", OPT_LAYOUT, "LIST",
	    "contiguous, blocked (contiguous, attended\n"
	    "in blocks), paged (default contiguous)"),
	OPT(T_BENCH, "block-size", 'b', "LIST",
	    "positions per block of blocked and paged\n"
	    "(default 16)"),
	OPT(T_BENCH, "weights-dtype", OPT_WDTYPE, "LIST",
	    "the weights in memory: f32, bf16, f16\n"
	    "(default: a checkpoint's own, else f32)"),
	OPT(T_BENCH, "layers", OPT_LAYERS, "N",
	    "decoder layers instead of the config's"),
	OPT(T_BENCH, "vocab", OPT_VOCAB, "N",
	    "vocabulary instead of the config's"),
	OPT(T_BENCH, "reps", 'R', "N",
	    "timed repetitions per point (default 5)"),
	OPT(T_BENCH, "warmup", OPT_WARMUP, "N",
	    "untimed repetitions first (default: 0.2 s\n"
	    "of them, at least 1)"),
	OPT(T_BENCH, "membw-size", OPT_MEMBW, "SIZE",
	    "bytes the bandwidth probe reads (default\n"
	    "512MiB, 16x a 32 MiB last-level cache)"),
	OPT(T_BENCH, "sgemm-n", OPT_SGEMM_N, "N",
	    "size of the sgemm probe (default 1024)"),
	OPT(T_BENCH, "profile", OPT_PROFILE, "FILE",
	    "measure this machine as a device (membw,\n"
	    "sgemm, a decode step, a prefill and steps\n"
	    "of 4 and 32 users per --threads) and write\n"
	    "it to FILE as a GPU table for kvfit"),
	OPT(T_BENCH, "baseline", OPT_BASELINE, "FILE",
	    "run the points of a saved run again, with\n"
	    "each point's ratio to it"),
	OPT(T_BENCH, "max-regress", OPT_MAX_REGRESS, "F",
	    "with --baseline: exit 1 when a point is\n"
	    "slower by more than F (0.2 = 20%)"),
	OPT(T_BENCH, "seed", 's', "N",
	    "weights' seed (default 0)"),
	/* every tool */
	OPT(T_FIT, "output", 'o', "FORMAT",
	    "tsv (the default when piped), csv, json, md\n"
	    "(a Markdown table) or table (aligned, sizes\n"
	    "in units: the default on a terminal); or\n"
	    "vllm, sglang, llama-server, trtllm: the\n"
	    "command that runs each row"),
	OPT(T_SIZE | T_DECODE | T_BENCH, "output", 'o', "FORMAT",
	    "tsv (the default when piped), csv, json, md\n"
	    "(a Markdown table) or table (aligned, sizes\n"
	    "in units: the default on a terminal)"),
	OPT(T_ALL, "verbose", 'v', NULL,
	    "a table on a terminal shows every column"),
	OPT(T_ALL, "json", OPT_JSON, NULL,
	    "a JSON array of records instead of TSV"),
	OPT(T_ALL, "no-header", OPT_NO_HEADER, NULL,
	    "no header row"),
	OPT(T_ALL, "help", 'h', NULL,
	    "this help, then exit"),
	OPT(T_ALL, "version", OPT_VERSION, NULL,
	    "the version, then exit"),

	/* the engines' names */
	ALIAS(T_SIZE | T_FIT, "tensor-parallel-size", OPT_TP, "N", "vLLM",
	      "tp"),
	ALIAS(T_FIT, "pipeline-parallel-size", OPT_PP, "N", "vLLM", "pp"),
	ALIAS(T_FIT, "gpu-memory-utilization", OPT_UTIL, "F", "vLLM", "util"),
	ALIAS(T_SIZE | T_FIT | T_BENCH, "max-model-len", 'c', "LIST", "vLLM",
	      "ctx"),
	ALIAS(T_ALL, "kv-cache-dtype", 't', "LIST", "vLLM", "kv-dtype"),
	ALIAS(T_FIT, "kv-cache-memory", OPT_KV_MEMORY, "SIZE", "vLLM",
	      "kv-memory"),
	ALIAS(T_FIT, "kv-offloading-size", OPT_KV_OFFLOAD_GIB, "GIB", "vLLM",
	      "kv-offload"),
	ALIAS(T_SIZE | T_BENCH, "ctx-size", 'c', "LIST", "llama.cpp", "ctx"),
	ALIAS(T_FIT, "ctx-size", OPT_CTX_SIZE, "LIST", "llama.cpp", "ctx"),
	ALIAS(T_SIZE | T_FIT | T_BENCH, "cache-type-k", OPT_CTK, "F",
	      "llama.cpp", "kv-dtype"),
	ALIAS(T_SIZE | T_FIT | T_BENCH, "cache-type-v", OPT_CTV, "F",
	      "llama.cpp", "kv-dtype"),
	ALIAS(T_DECODE, "cache-type-k", OPT_K_DTYPE, "F", "llama.cpp",
	      "k-dtype"),
	ALIAS(T_DECODE, "cache-type-v", OPT_V_DTYPE, "F", "llama.cpp",
	      "v-dtype"),
	ALIAS(T_FIT, "parallel", OPT_SEQS, "N", "llama.cpp", "max-num-seqs"),
	ALIAS(T_FIT, "ubatch-size", OPT_BATCHED, "N", "llama.cpp",
	      "max-num-batched-tokens"),
	ALIAS(T_FIT, "model-draft", OPT_DRAFT, "CONFIG", "llama.cpp",
	      "draft"),
	ALIAS(T_FIT, "draft-max", OPT_SPEC_TOKENS, "K", "llama.cpp",
	      "spec-tokens"),
	ALIAS(T_FIT, "gpu-layers", OPT_NGL, "N", "llama.cpp",
	      "n-gpu-layers"),
	ALIAS(T_FIT, "max-running-requests", OPT_SEQS, "N", "SGLang",
	      "max-num-seqs"),
	ALIAS(T_FIT, "mem-fraction-static", OPT_UTIL, "F", "SGLang", "util"),
	ALIAS(T_FIT, "context-length", 'c', "LIST", "SGLang", "ctx"),
	ALIAS(T_FIT, "chunked-prefill-size", OPT_BATCHED, "N", "SGLang",
	      "max-num-batched-tokens"),
	ALIAS(T_FIT, "page-size", 'b', "LIST", "SGLang", "block-size"),
	ALIAS(T_FIT, "max-loras-per-batch", OPT_MAX_LORAS, "N", "SGLang",
	      "max-loras"),
	ALIAS(T_FIT, "max-loaded-loras", OPT_CPU_LORAS, "N", "SGLang",
	      "max-cpu-loras"),
	ALIAS(T_FIT, "hicache-size", OPT_HICACHE_SIZE, "GB", "SGLang",
	      "kv-offload"),
	ALIAS(T_FIT, "hicache-ratio", OPT_HICACHE_RATIO, "F", "SGLang",
	      "kv-offload"),
	ALIAS(T_FIT, "speculative-draft-model-path", OPT_DRAFT, "CONFIG",
	      "SGLang", "draft"),
	ALIAS(T_FIT, "speculative-num-steps", OPT_SPEC_TOKENS, "K", "SGLang",
	      "spec-tokens"),
	ALIAS(T_FIT, "max_batch_size", OPT_SEQS, "N", "TensorRT-LLM",
	      "max-num-seqs"),
	ALIAS(T_FIT, "max_num_tokens", OPT_BATCHED, "N", "TensorRT-LLM",
	      "max-num-batched-tokens"),
	ALIAS(T_FIT, "max_seq_len", 'c', "LIST", "TensorRT-LLM", "ctx"),
	ALIAS(T_FIT, "kv_cache_free_gpu_memory_fraction", OPT_UTIL, "F",
	      "TensorRT-LLM", "util"),
	ALIAS(T_FIT, "host_cache_size", OPT_HOST_CACHE_SIZE, "BYTES",
	      "TensorRT-LLM", "kv-offload"),
	/* what kvfit's commands (-o ENGINE) write, read back */
	ALIAS(T_FIT, "kv-cache-memory-bytes", OPT_KV_MEMORY, "SIZE", "vLLM",
	      "kv-memory"),
	ALIAS(T_FIT, "tp-size", OPT_TP, "N", "SGLang", "tp"),
	ALIAS(T_FIT, "pp-size", OPT_PP, "N", "SGLang", "pp"),
	ALIAS(T_FIT, "tp_size", OPT_TP, "N", "TensorRT-LLM", "tp"),
	ALIAS(T_FIT, "pp_size", OPT_PP, "N", "TensorRT-LLM", "pp"),
	ALIAS(T_FIT, "speculative-algorithm", OPT_SPEC_METHOD, "HOW",
	      "SGLang", "spec-method"),
	ALIAS(T_FIT, "data-parallel-size", OPT_DP, "N", "vLLM", "dp"),
	ALIAS(T_FIT, "enable-expert-parallel", OPT_EP_ALL, NULL, "vLLM",
	      "ep"),
	ALIAS(T_FIT, "dp-size", OPT_DP, "N", "SGLang", "dp"),
	ALIAS(T_FIT, "enable-dp-attention", OPT_DP_ATTN_ONE, NULL, "SGLang",
	      "dp-attention"),
	ALIAS(T_FIT, "ep-size", OPT_EP, "N", "SGLang", "ep"),
	ALIAS(T_FIT, "expert-parallel-size", OPT_EP, "N", "SGLang", "ep"),
	ALIAS(T_FIT, "enable_attention_dp", OPT_DP_ATTN, NULL,
	      "TensorRT-LLM", "dp-attention"),
	ALIAS(T_FIT, "moe_expert_parallel_size", OPT_EP, "N", "TensorRT-LLM",
	      "ep"),
	ALIAS(T_FIT, "enable_chunked_prefill", OPT_CHUNKED, NULL,
	      "TensorRT-LLM", "enable-chunked-prefill"),
	ALIAS(T_FIT, "ep_size", OPT_EP, "N", "TensorRT-LLM", "ep"),
};

const size_t cli_nopts = sizeof cli_opts / sizeof *cli_opts;

/* What to say when a tool is given a letter that another tool has. */
static const struct {
	unsigned tool;
	int letter;
	const char *hint;
} elsewhere[] = {
	{T_DECODE, 'c', "kvdecode's context is --prompt and --new, its "
			"cache mode --cache MODE"},
	{T_BENCH, 'r', "kvbench's repetitions are -R, --reps"},
};

static const char *const tool_names[] = {"kvsize", "kvfit", "kvdecode",
					 "kvbench"};

unsigned cli_tool(const char *prog)
{
	for (size_t i = 0; i < 4; i++)
		if (!strcmp(prog, tool_names[i]))
			return 1u << i;
	return 0;
}

/* getopt's tables for one tool, built from cli_opts on the first call. */
static struct option longs[CLI_MAX_OPTS + 1];
static char shorts[2 * 128 + 2];

static void build(unsigned tool)
{
	size_t nl = 0, ns = 0;
	shorts[ns++] = ':';
	for (size_t i = 0; i < cli_nopts && nl < CLI_MAX_OPTS; i++) {
		const struct cli_opt *o = &cli_opts[i];
		if (!(o->tools & tool))
			continue;
		longs[nl++] = (struct option){
			o->name, o->arg ? required_argument : no_argument,
			NULL, o->key};
		if (o->key < 128 && o->help &&
		    !memchr(shorts, o->key, ns)) {
			shorts[ns++] = (char)o->key;
			if (o->arg)
				shorts[ns++] = ':';
		}
	}
	longs[nl] = (struct option){0};
	shorts[ns] = '\0';
}

/* A letter this tool lacks: where it is found. */
static int letter_elsewhere(unsigned tool, int letter)
{
	char where[128] = "";
	const char *name = NULL;
	size_t n = 0;
	for (size_t i = 0; i < cli_nopts; i++) {
		const struct cli_opt *o = &cli_opts[i];
		if (o->key != letter || !o->help || (o->tools & tool))
			continue;
		name = o->name;
		for (size_t t = 0; t < 4; t++)
			if ((o->tools & (1u << t)) &&
			    !strstr(where, tool_names[t]))
				n += (size_t)snprintf(where + n, sizeof where - n,
						      "%s%s", n ? ", " : "",
						      tool_names[t]);
	}
	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof elsewhere / sizeof *elsewhere; i++)
		if (elsewhere[i].tool == tool && elsewhere[i].letter == letter)
			return cli_usage("-%c is --%s (%s); %s", letter, name,
					 where, elsewhere[i].hint);
	return cli_usage("-%c is --%s (%s); %s has no --%s", letter, name,
			 where, cli_prog(), name);
}

/* Each key's name as given first, and its value (argv's), for
 * cli_opt_as() and the check of one option under two names. */
#define MAX_KEYS 512
static const char *given_name[MAX_KEYS], *given_value[MAX_KEYS];
static char as[80];

/* The long name of key in this tool's table (a letter's own option). */
static const char *long_name(int key)
{
	for (size_t i = 0; longs[i].name; i++)
		if (longs[i].val == key)
			return longs[i].name;
	return "?";
}

const char *cli_opt_as(void)
{
	return as;
}

int cli_getopt(int argc, char **argv)
{
	static unsigned built;
	unsigned tool = cli_tool(cli_prog());
	int li = -1;
	if (built != tool) {
		build(tool);
		built = tool;
		opterr = 0;
		if (cli_single_dash(argc, argv))
			return '?';
	}
	if (optind <= 1) /* a parse from the start */
		memset(given_name, 0, sizeof given_name);
	int c = getopt_long(argc, argv, shorts, longs, &li);
	if (c >= 0 && c < MAX_KEYS && c != '?' && c != ':') {
		const char *name = li >= 0 ? longs[li].name : long_name(c);
		const char *value = optarg ? optarg : "";
		snprintf(as, sizeof as, "--%s", name);
		if (given_name[c] && strcmp(given_name[c], name) &&
		    strcmp(given_value[c], value)) {
			cli_usage("--%s %s and --%s %s: one option under two "
				  "names; give it once",
				  given_name[c], given_value[c], name, value);
			return '?';
		}
		given_name[c] = name;
		given_value[c] = value;
	}
	if (c != '?' && c != ':')
		return c;
	if (c == '?' && optopt > 0 && optopt < 128 &&
	    argv[optind - 1][0] == '-' && argv[optind - 1][1] != '-' &&
	    letter_elsewhere(tool, optopt))
		return '?';
	cli_bad_option(argv, c);
	return '?';
}

/* Writes s at column 25, its later lines too. */
static void help_text(FILE *f, const char *s)
{
	for (const char *p = s; *p; p++) {
		fputc(*p, f);
		if (*p == '\n')
			fprintf(f, "%25s", "");
	}
	fputc('\n', f);
}

/* The next engine's name for an option of this tool after row i, or
 * NULL. */
static const struct cli_opt *next_alias(unsigned tool, size_t i)
{
	for (size_t j = i + 1; j < cli_nopts; j++)
		if (!cli_opts[j].help && (cli_opts[j].tools & tool))
			return &cli_opts[j];
	return NULL;
}

/* The engines' names for this tool's options, as one paragraph:
 * "vLLM's --a (--b), --c (--d); llama.cpp's --e (--f)." */
static void help_aliases(FILE *f, unsigned tool)
{
	const struct cli_opt *o = next_alias(tool, (size_t)-1), *next;
	const char *engine = NULL;
	size_t col;
	if (!o)
		return;
	fputs("\nThe engines' names work too:", f);
	col = 28;
	for (; o; o = next) {
		char word[128];
		bool first = !engine || strcmp(engine, o->engine);
		next = next_alias(tool, (size_t)(o - cli_opts));
		snprintf(word, sizeof word, "%s%s--%s (--%s)%s",
			 first ? o->engine : "", first ? "'s " : "", o->name,
			 o->of,
			 !next ? "." : strcmp(next->engine, o->engine) ? ";"
								: ",");
		engine = o->engine;
		size_t n = strlen(word);
		fputc(col + 1 + n > 70 ? '\n' : ' ', f);
		col = col + 1 + n > 70 ? n : col + 1 + n;
		fputs(word, f);
	}
	fputc('\n', f);
}

void cli_help(FILE *f, const char *head, const char *foot)
{
	unsigned tool = cli_tool(cli_prog());
	fputs(head, f);
	for (size_t i = 0; i < cli_nopts; i++) {
		const struct cli_opt *o = &cli_opts[i];
		char left[64];
		if (!o->help || !(o->tools & tool))
			continue;
		if (o->key < 128)
			snprintf(left, sizeof left, "  -%c, --%s%s%s", o->key,
				 o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof left, "      --%s%s%s", o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		if (strlen(left) <= 23)
			fprintf(f, "%-25s", left);
		else
			fprintf(f, "%s\n%25s", left, "");
		help_text(f, o->help);
	}
	help_aliases(f, tool);
	fputs(foot, f);
}
