/*
 * gpu.h - the GPUs kvfit knows: memory as the driver reports it, memory
 * bandwidth, dense peak FLOP/s and the links between GPUs, read from
 * configs/gpus.json so that a new card is a data change, not a code
 * change; and this machine as such an entry, measured (kvbench --profile)
 * and written as a table of the same form.
 *
 * The file is an object with a "gpus" array; each entry has "name",
 * optional "aliases" (strings), "label", "memory_bytes" (whole bytes),
 * "bandwidth_gbps" (10^9 B/s), "bf16_tflops", "fp8_tflops", "fp4_tflops"
 * (dense, null when the chip has none) and "source" (where the figures
 * come from).
 * Optional, each null or absent when unknown:
 *   "interconnect_gbps"  what one GPU sends to the others at once, one
 *                        direction, 10^9 B/s: the links tensor
 *                        parallelism's all-reduce runs over (NVLink,
 *                        Infinity Fabric, PCIe); datasheets' "900 GB/s"
 *                        counts both directions, so 450 here
 *   "interconnect"       those links in words ("NVLink 4, 18 links")
 *   "bandwidth_efficiency"  in (0, 2]: the share of bandwidth_gbps a
 *                        decode step's reads reached where it was
 *                        measured (kvbench --profile; above 1 where
 *                        they outran the probe)
 *   "flops_efficiency"   in (0, 2]: the share of bf16_tflops a prefill's
 *                        matrix products reached, likewise
 *   "decode_tflops"      the FLOP rate, 10^12/s, a decode step of
 *                        several users' products reached where it was
 *                        measured (kvbench --profile)
 *   "serial_fraction"    in [0, 1]: of such a step, the share of its
 *                        products' shorter side (reads or FLOPs) that
 *                        ran after the longer, not beside it; absent: 0
 *   "threads"            a CPU profile's thread count (1 to 65536)
 *   "unified_memory"     true for a GPU that shares the machine's memory
 *                        (Apple silicon): memory_bytes is then the RAM,
 *                        of which the GPU may wire only its wired limit
 *                        (kv_gpu_wired_default, or iogpu.wired_limit_mb)
 *   "efficiency_like"    the measured GPU (a name of this table) whose
 *                        efficiencies (efficiency.json) it borrows,
 *                        scaled to its own datasheet, where it has none
 *                        of its own; absent: the nearest in rates
 *   "host_link_gbps"     what one GPU moves to or from host memory at
 *                        once, one direction, 10^9 B/s (its PCIe link,
 *                        or NVLink-C2C to a Grace CPU): what a host
 *                        tier of KV loads back over
 * Other fields ("note", "_comment") are ignored.
 */
#ifndef KV_GPU_H
#define KV_GPU_H


#include "dtype.h"
#include "quant.h"

#define KV_GPU_ALIASES 8
#define KV_GPU_MAX_THREADS 65536 /* a profile's "threads", at most */

struct kv_gpu {
	char name[32];            /* canonical name, "h100-sxm" */
	char aliases[KV_GPU_ALIASES][32]; /* other names, "" when unused */
	char label[96];           /* the vendor's name */
	uint64_t memory_bytes;    /* total memory, bytes, as the driver says */
	double bandwidth_gbps;    /* memory bandwidth, 10^9 bytes/s */
	double bf16_tflops;       /* dense bf16 peak, 10^12 FLOP/s */
	double fp8_tflops;        /* dense fp8 peak, 10^12 FLOP/s; 0: none */
	double fp4_tflops;        /* dense fp4 (NVFP4, MXFP4) peak; 0: none */
	char source[512];         /* where the figures come from */
	double interconnect_gbps; /* GPU-to-GPU, one direction, 10^9 B/s;
				   * 0: unknown */
	char interconnect[64];    /* the links, "NVLink 4, 18 links"; "" */
	double bandwidth_efficiency; /* measured share of bandwidth_gbps a
				      * decode step reads at, (0,
				      * KV_GPU_EFF_MAX] (above 1 where it
				      * outran the probe); 0: not measured */
	double flops_efficiency;  /* measured share of bf16_tflops a
				   * prefill's products run at; 0: not
				   * measured */
	double decode_tflops;     /* measured FLOP rate of a several-user
				   * decode step's products; 0: not measured */
	double serial_fraction;   /* measured share of those products that
				   * did not overlap, [0, 1]; 0: none, or not
				   * measured */
	uint32_t threads;         /* threads a CPU profile ran; 0: none */
	bool fitted;              /* the efficiencies were fitted to serving
				   * benchmarks (kvfit --calibrate), not
				   * profiled */
	bool unified;             /* memory shared with the CPU (Apple
				   * silicon): memory_bytes is the RAM, and
				   * the GPU wires at most its wired limit */
	char efficiency_like[32]; /* the measured GPU whose efficiencies it
				   * borrows, scaled; "": the nearest */
	double host_link_gbps;    /* GPU to host memory (PCIe, NVLink-C2C),
				   * one direction, 10^9 B/s; 0: unknown */
};

/* The most a measured efficiency may be: a step twice its probe's rate
 * is a probe that measured something else. */
#define KV_GPU_EFF_MAX 2.0

/* The most MiB a wired limit may be: 2^40 (an exbibyte), far past any
 * Mac, so that MiB x 2^20 stays within 64 bits. */
#define KV_GPU_WIRED_MAX_MB (1ULL << 40)

/* macOS's default GPU wired limit on a Mac of `ram` bytes: what Metal's
 * recommendedMaxWorkingSetSize reports while iogpu.wired_limit_mb is 0.
 * Two thirds of the RAM, rounded up to the 16 KiB page, up to 32 GiB;
 * three quarters above (llama.cpp's logs of it, macOS 13 to 15: 16 GiB
 * 10922.67 MiB, 32 GiB 21845.34 MiB, 36 GiB 28991.03 MB, 64 GiB 49152.00
 * MiB, 96 GiB 73728.00 MiB, 128 GiB 103079.22 MB; see kvfit(1)). 0 for
 * 0. */
uint64_t kv_gpu_wired_default(uint64_t ram);

/* The bytes g's GPU may hold: its memory_bytes, or on unified memory its
 * wired limit, wired_mb MiB (sysctl iogpu.wired_limit_mb) or, for 0,
 * macOS's default. Returns 0; KV_EINVAL when wired_mb is given for a GPU
 * without unified memory, KV_ERANGE when wired_mb MiB exceed its RAM. */
int kv_gpu_usable(const struct kv_gpu *g, uint64_t wired_mb, uint64_t *out);

/* x to `digits` significant digits, as the nearest double to that
 * decimal (so that it prints as written); 0 for x <= 0. */
double kv_gpu_sig(double x, int digits);

/* A table of GPUs; free with kv_gpus_free(). */
struct kv_gpus {
	struct kv_gpu *gpu; /* n entries */
	size_t n;
};

/* Parses a gpus.json text; `path` names it in messages. On success *out
 * is allocated (kv_gpus_free). On failure returns KV_EINVAL or KV_ENOMEM
 * with one line in err: "path: gpus[3].memory_bytes: must be ...". */
int kv_gpus_parse(const char *json, size_t len, const char *path,
		  struct kv_gpus **out, char *err);

/* Reads a gpus.json file. Same contract as kv_gpus_parse(), plus KV_EIO. */
int kv_gpus_load(const char *path, struct kv_gpus **out, char *err);

/* Finds gpus.json where configs are found (kv_config_dir order) and
 * writes its path into out (n bytes). Returns 0 or KV_EIO. */
int kv_gpus_find(char *out, size_t n);

/* The entry named `name` or one of its aliases, case-insensitively, with
 * "_" and " " read as "-"; NULL when none. The pointer lives as long as
 * the table. */
const struct kv_gpu *kv_gpus_lookup(const struct kv_gpus *g,
				    const char *name);

/* The canonical names, comma-separated, into buf. Returns buf. */
char *kv_gpus_list(const struct kv_gpus *g, char *buf, size_t n);

/* The format the products of weights stored as w, quantized as q (NULL:
 * not), run in on g (NULL: a GPU with every format), as the engines'
 * kernels do: fp8 weights (a checkpoint's or compressed-tensors' fp8,
 * or stored fp8 or int8) in fp8 where the GPU has it; NVFP4 in fp4 where
 * it has that; MXFP4 (gpt-oss) against fp8 activations on a GPU with
 * fp4 (TensorRT-LLM's and FlashInfer's W4A8), else in 16 bits; every
 * other weight-only format (AWQ, GPTQ, int4, bitsandbytes) in 16 bits,
 * its weights widened (Marlin), as are fp8 and fp4 weights on a GPU
 * without those formats. */
enum kv_compute kv_gpu_compute(const struct kv_gpu *g, enum kv_dtype w,
			       const struct kv_quant *q);

/* g's dense peak (10^12 FLOP/s) in format c; 0 when unknown. */
double kv_gpu_peak(const struct kv_gpu *g, enum kv_compute c);

/* The dense peak (10^12 FLOP/s) a step with weights stored in format w
 * (not quantized) computes at: kv_gpu_peak of kv_gpu_compute. */
double kv_gpu_tflops(const struct kv_gpu *g, enum kv_dtype w);

void kv_gpus_free(struct kv_gpus *g);

/* --- this machine as a device (kvbench --profile) --- */

/* This machine before anything is measured, from /proc texts (either may
 * be NULL): label the CPU's "model name" of cpuinfo, else "this
 * machine"; memory_bytes MemTotal of meminfo, the physical total (not
 * the part a run may take, kv_run_memory's). The rest of *g is zeroed.
 * Returns 0, or KV_EINVAL when meminfo has no MemTotal. */
int kv_gpu_local_parse(const char *cpuinfo, const char *meminfo,
		       struct kv_gpu *g);

/* The same from /proc/cpuinfo and /proc/meminfo. Returns 0, or KV_EIO
 * with err when the memory cannot be read. */
int kv_gpu_local(struct kv_gpu *g, char *err);

/* Gives the fastest entry among g[0 .. n), the one whose decode step
 * reads the most bytes a second (bandwidth_gbps x bandwidth_efficiency),
 * the alias "local" (the first of them on a tie). */
void kv_gpus_alias_local(struct kv_gpu *g, size_t n);

/* Table g[0 .. n) as gpus.json text that kv_gpus_parse() reads back:
 * {"_comment": comment, "gpus": [...]}, each entry's known fields (null
 * for an absent fp8 rate or link; no efficiency or threads where 0) and,
 * when note is not NULL, a "note" of that text. Returns a string to
 * free(), or NULL out of memory. */
char *kv_gpus_json(const struct kv_gpu *g, size_t n, const char *comment,
		   const char *note);

/* Writes text to path through a temporary file beside it, renamed over
 * path once whole, so a reader sees the old file or the new one. Returns
 * 0, or KV_EIO with err "path: why". */
int kv_gpus_save(const char *path, const char *text, char *err);

/* Whether kv_gpus_save() could write path: a temporary file beside it is
 * made and removed, and path is not a directory. Returns 0 or KV_EIO
 * with err "path: why". */
int kv_gpus_writable(const char *path, char *err);

#endif
