/*
 * test_gpu.c - the shipped configs/gpus.json loads and says what the
 * reference table says; bad entries give one line naming the field; a
 * profile of this machine is made from its measurements, written and
 * read back.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv/engine.h"
#include "kv/gpu.h"
#include "kv/sweep.h"
#include "test.h"

/* One entry "x" with the required fields and `more` after them. */
#define ONE(more)                                                       \
	"[{\"name\":\"x\",\"source\":\"s\",\"memory_bytes\":1,"     \
	"\"bandwidth_gbps\":1" more "}]"

static int parse_err(const char *json, char *err)
{
	struct kv_gpus *g = NULL;
	int e = kv_gpus_parse(json, strlen(json), "t.json", &g, err);
	kv_gpus_free(g);
	return e;
}

/* This machine from /proc texts. */
static void local_machine(void)
{
	struct kv_gpu g;
	uint64_t b;
	static const char cpu[] =
		"processor\t: 0\nvendor_id\t: GenuineIntel\n"
		"model name\t: Intel(R) Xeon(R) Platinum 8480C  \n"
		"processor\t: 1\nmodel name\t: another\n";
	static const char mem[] = "MemTotal:       65536000 kB\n"
				  "MemFree:        1000 kB\n"
				  "MemAvailable:   32768000 kB\n";
	CHECK(kv_gpu_local_parse(cpu, mem, &g) == 0);
	CHECK_STR(g.label, "Intel(R) Xeon(R) Platinum 8480C");
	CHECK_U64(g.memory_bytes, 65536000ULL * 1024); /* the total */
	CHECK(g.bandwidth_gbps == 0 && g.threads == 0 && !g.name[0]);
	/* no model name (an ARM cpuinfo): "this machine" */
	CHECK(kv_gpu_local_parse("processor\t: 0\nBogoMIPS\t: 50.00\n", mem,
				 &g) == 0);
	CHECK_STR(g.label, "this machine");
	CHECK(kv_gpu_local_parse(NULL, mem, &g) == 0);
	CHECK_STR(g.label, "this machine");
	CHECK(kv_gpu_local_parse(cpu, "MemAvailable: 1 kB\n", &g) ==
	      KV_EINVAL);
	CHECK(kv_gpu_local_parse(cpu, NULL, &g) == KV_EINVAL);
	/* a field at a line's start only, in kB */
	CHECK(kv_meminfo_field("SwapTotal: 5 kB\nMemTotal: 7 kB\n",
			       "MemTotal", &b) == 0);
	CHECK_U64(b, 7 * 1024);
	CHECK(kv_meminfo_field("XMemTotal: 5 kB\n", "MemTotal", &b) ==
	      KV_EINVAL);
	CHECK(kv_meminfo_field("MemTotal: 5 MB\n", "MemTotal", &b) ==
	      KV_EINVAL);
	char err[KV_ERRLEN];
	if (access("/proc/meminfo", R_OK) == 0) {
		CHECK(kv_gpu_local(&g, err) == 0);
		CHECK(g.memory_bytes > 0 && g.label[0]);
	}
}

/* A profile entry from a decode step and a prefill, by hand. */
static void profile_entry(void)
{
	struct kv_gpu local = {.memory_bytes = 1ULL << 36}, g;
	char err[KV_ERRLEN];
	snprintf(local.label, sizeof local.label, "Some CPU");
	/* 12.3456 GB/s beside the decode step, which reached 0.81234 of
	 * it; an sgemm rate of 987.654 GFLOP/s, which the prefill passed
	 * 1.7 times (its reads faster than the probe's): kept */
	struct kv_bench_result dec = {.ref_gbps = 12.3456,
				      .efficiency = 0.81234},
			       pre = {.ref_gflops = 987.654,
				      .efficiency = 1.7};
	CHECK(kv_gpu_profile(&local, 8, &dec, &pre, 86400 * 365, "how", &g,
			     err) == 0);
	CHECK_STR(g.name, "local-j8");
	CHECK_STR(g.label, "Some CPU");
	CHECK_U64(g.memory_bytes, 1ULL << 36);
	CHECK(g.bandwidth_gbps == 12.35);   /* 4 significant digits */
	CHECK(g.bf16_tflops == 0.9877);     /* 10^12 FLOP/s */
	CHECK(g.bandwidth_efficiency == 0.812);
	CHECK(g.flops_efficiency == 1.7);
	CHECK(g.fp8_tflops == 0 && g.interconnect_gbps == 0);
	CHECK_U64(g.threads, 8);
	CHECK_STR(g.source, "kvbench --profile, 1971-01-01, 8 threads, how");
	/* large figures keep their digits whole */
	dec.ref_gbps = 123456.7;
	CHECK(kv_gpu_profile(&local, 1, &dec, &pre, 0, NULL, &g, err) == 0);
	CHECK(g.bandwidth_gbps == 123500);
	CHECK_STR(g.source, "kvbench --profile, 1970-01-01, 1 thread");
	/* a step or its reference missing */
	dec.ref_gbps = 0;
	CHECK(kv_gpu_profile(&local, 4, &dec, &pre, 0, "", &g, err) ==
	      KV_EINVAL);
	CHECK_STR(err, "profile on 4 threads: no decode step and its "
		       "bandwidth probe");
	dec.ref_gbps = 10;
	pre.efficiency = 0;
	CHECK(kv_gpu_profile(&local, 4, &dec, &pre, 0, "", &g, err) ==
	      KV_EINVAL);
	CHECK_STR(err, "profile on 4 threads: no prefill and its sgemm rate");
	CHECK(kv_gpu_profile(&local, 4, &dec, NULL, 0, "", &g, err) ==
	      KV_EINVAL);
}

/* A profile's table written as JSON, saved, and read back as kvfit reads
 * it. */
static void profile_table(void)
{
	struct kv_gpu local = {.memory_bytes = 64000000000ULL}, g[3];
	struct kv_bench_result dec = {.ref_gbps = 20.5, .efficiency = 0.6},
			       pre = {.ref_gflops = 150, .efficiency = 0.45};
	char err[KV_ERRLEN], dir[] = "/tmp/test_gpu.XXXXXX", path[64];
	snprintf(local.label, sizeof local.label, "CPU \"quoted\"");
	static const uint32_t threads[] = {1, 8, 4};
	static const double eff[] = {0.3, 0.5, 0.6};
	for (int i = 0; i < 3; i++) {
		dec.efficiency = eff[i];
		CHECK(kv_gpu_profile(&local, threads[i], &dec, &pre, 0, "x",
				     &g[i], err) == 0);
	}
	dec.efficiency = 0.6;
	g[0].decode_tflops = 0.2125;
	g[0].serial_fraction = 0.375;
	kv_gpus_alias_local(g, 3);
	/* the fastest decode step (20.5 GB/s x 0.6 on 4 threads), not the
	 * most threads: 8 threads on 2 cores share them */
	CHECK_STR(g[2].aliases[0], "local");
	CHECK(!g[0].aliases[0][0] && !g[1].aliases[0][0]);
	char *text = kv_gpus_json(g, 3, "a comment", kv_gpu_profile_note);
	CHECK(text != NULL);
	if (!text)
		return;
	CHECK_HAS(text, "\"fp8_tflops\":\tnull");
	CHECK_HAS(text, "\"interconnect_gbps\":\tnull");
	CHECK_HAS(text, "float32 sgemm");
	struct kv_gpus *back = NULL;
	CHECK(kv_gpus_parse(text, strlen(text), "p.json", &back, err) == 0);
	if (back) {
		CHECK_U64(back->n, 3);
		const struct kv_gpu *l = kv_gpus_lookup(back, "local");
		CHECK(l && !strcmp(l->name, "local-j4"));
		CHECK(kv_gpus_lookup(back, "local-j4") == &back->gpu[2]);
		CHECK_STR(back->gpu[0].label, "CPU \"quoted\"");
		CHECK_U64(back->gpu[0].memory_bytes, 64000000000ULL);
		CHECK(back->gpu[0].bandwidth_gbps == 20.5);
		CHECK(back->gpu[0].bf16_tflops == 0.15);
		CHECK(back->gpu[0].fp8_tflops == 0);
		CHECK(back->gpu[0].bandwidth_efficiency == 0.3);
		CHECK(back->gpu[0].flops_efficiency == 0.45);
		CHECK(back->gpu[0].decode_tflops == 0.2125);
		CHECK(back->gpu[0].serial_fraction == 0.375);
		CHECK(back->gpu[1].decode_tflops == 0 &&
		      back->gpu[1].serial_fraction == 0);
		CHECK_U64(back->gpu[2].threads, 4);
		CHECK_STR(back->gpu[0].source,
			  "kvbench --profile, 1970-01-01, 1 thread, x");
	}
	kv_gpus_free(back);
	/* the datasheet's table round-trips too */
	if (kv_gpus_load("configs/gpus.json", &back, err) == 0) {
		char *t2 = kv_gpus_json(back->gpu, back->n, NULL, NULL);
		struct kv_gpus *again = NULL;
		CHECK(t2 && kv_gpus_parse(t2, strlen(t2), "t2", &again,
					  err) == 0);
		CHECK(again && again->n == back->n &&
		      !memcmp(again->gpu, back->gpu,
			      back->n * sizeof *back->gpu));
		kv_gpus_free(again);
		free(t2);
	}
	kv_gpus_free(back);

	/* saved whole, through a file beside it */
	CHECK(mkdtemp(dir) != NULL);
	umask(022);
	snprintf(path, sizeof path, "%s/local.json", dir);
	CHECK(kv_gpus_writable(path, err) == 0);
	CHECK(access(path, F_OK) != 0); /* the check leaves nothing */
	CHECK(kv_gpus_save(path, text, err) == 0);
	CHECK(kv_gpus_save(path, text, err) == 0); /* over the old one */
	CHECK(kv_gpus_load(path, &back, err) == 0 && back && back->n == 3);
	kv_gpus_free(back);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
	CHECK(kv_gpus_writable(dir, err) == KV_EIO);
	CHECK_HAS(err, ": Is a directory");
	CHECK(kv_gpus_save(dir, text, err) == KV_EIO);
	snprintf(path, sizeof path, "%s/no/such/dir.json", dir);
	char want[128];
	snprintf(want, sizeof want, "%s: No such file or directory", path);
	CHECK(kv_gpus_writable(path, err) == KV_EIO);
	CHECK_STR(err, want);
	CHECK(kv_gpus_save(path, text, err) == KV_EIO);
	snprintf(path, sizeof path, "%s/local.json", dir);
	unlink(path);
	rmdir(dir);
	free(text);
}

/* macOS's default GPU wired limit, against what llama.cpp logged of
 * Metal's recommendedMaxWorkingSetSize (MiB before 2024, 10^6 B after). */
static void wired(void)
{
	char buf[32];
	/* 16 GiB, M1 Pro (abetlen/llama-cpp-python#687): "10922.67 MB";
	 * 2/3 x 17179869184 = 11453246122.67, up to the 16 KiB page:
	 * 699051 x 16384 */
	CHECK_U64(kv_gpu_wired_default(16ULL << 30), 11453251584ULL);
	snprintf(buf, sizeof buf, "%.2f",
		 kv_gpu_wired_default(16ULL << 30) / 1048576.0);
	CHECK_STR(buf, "10922.67");
	/* 32 GiB, M2 Max (ollama/ollama#434): "21845.34 MB"; two thirds
	 * alone are 21845.33 MiB: 1398102 pages of 16 KiB */
	CHECK_U64(kv_gpu_wired_default(32ULL << 30), 22906503168ULL);
	snprintf(buf, sizeof buf, "%.2f",
		 kv_gpu_wired_default(32ULL << 30) / 1048576.0);
	CHECK_STR(buf, "21845.34");
	/* 36 GiB, an M4 Max (llama.cpp b7690): "28991.03 MB" of 10^6 B,
	 * 3/4 x 38654705664 = 28991029248: three quarters from 36 GiB */
	CHECK_U64(kv_gpu_wired_default(36ULL << 30), 28991029248ULL);
	/* 64 GiB, M1 Max (ggml-org/llama.cpp#1870): "49152.00 MiB" */
	CHECK_U64(kv_gpu_wired_default(64ULL << 30), 49152ULL << 20);
	/* 96 GiB, M2 Max (llama.cpp#3213): "73728,00 MB" */
	CHECK_U64(kv_gpu_wired_default(96ULL << 30), 73728ULL << 20);
	/* 128 GiB, M3 Max: "103079.22 MB" of 10^6 B */
	CHECK_U64(kv_gpu_wired_default(128ULL << 30), 103079215104ULL);
	CHECK_U64(kv_gpu_wired_default(0), 0);
	/* no overflow at the top: 3/4 of 2^64 - 1, rounded up, is 3 x 2^62 */
	CHECK_U64(kv_gpu_wired_default(UINT64_MAX), 3ULL << 62);

	/* the memory a GPU may use */
	struct kv_gpu mac = {.memory_bytes = 128ULL << 30, .unified = true},
		      card = {.memory_bytes = 81559ULL << 20};
	uint64_t b;
	CHECK(kv_gpu_usable(&mac, 0, &b) == 0);
	CHECK_U64(b, 96ULL << 30);
	/* iogpu.wired_limit_mb=114688: Metal reports 112.00 GiB
	 * (antirez/ds4#893, an M5 Max of 128 GB) */
	CHECK(kv_gpu_usable(&mac, 114688, &b) == 0);
	CHECK_U64(b, 112ULL << 30);
	CHECK(kv_gpu_usable(&mac, 131072, &b) == 0); /* all of it */
	CHECK_U64(b, 128ULL << 30);
	CHECK(kv_gpu_usable(&mac, 131073, &b) == KV_ERANGE);
	CHECK(kv_gpu_usable(&mac, KV_GPU_WIRED_MAX_MB + 1, &b) == KV_ERANGE);
	CHECK(kv_gpu_usable(&card, 0, &b) == 0);
	CHECK_U64(b, 81559ULL << 20);
	CHECK(kv_gpu_usable(&card, 1000, &b) == KV_EINVAL);
}

/* The cards added for local models, as their sources give them. */
static void new_cards(const struct kv_gpus *g)
{
	const struct kv_gpu *x = kv_gpus_lookup(g, "rtx-5090");
	CHECK(x != NULL);
	if (x) { /* nvidia-smi's 32607 MiB; 3352 AI TOPS (FP4, sparse) */
		CHECK_U64(x->memory_bytes, 32607ULL << 20);
		CHECK_NEAR(x->bandwidth_gbps, 1792, 0);
		CHECK_NEAR(x->bf16_tflops, 3352 / 16.0, 0); /* FP32 accum. */
		CHECK_NEAR(x->fp8_tflops, 3352 / 8.0, 0);
		CHECK_NEAR(x->fp4_tflops, 3352 / 2.0, 0);
		CHECK_NEAR(x->interconnect_gbps, 64, 0); /* PCIe 5.0 x16 */
		CHECK_STR(x->efficiency_like, "rtx-pro-6000-server");
		CHECK(!x->unified);
	}
	CHECK(kv_gpus_lookup(g, "5090") == x);
	/* the GB206 cards have eight PCIe 5.0 lanes */
	x = kv_gpus_lookup(g, "rtx-5060-ti");
	CHECK(x && x->memory_bytes == 16311ULL << 20 &&
	      x->interconnect_gbps == 32);
	x = kv_gpus_lookup(g, "rtx-5060-ti-8gb");
	CHECK(x && x->memory_bytes == 8151ULL << 20);
	/* GeForce Blackwell: FP8 twice, FP4 eight times its bf16 rate */
	static const char *const geforce[] = {
		"rtx-5090", "rtx-5080", "rtx-5070-ti", "rtx-5070",
		"rtx-5060-ti", "rtx-5060-ti-8gb", "rtx-5060", NULL};
	for (const char *const *n = geforce; *n; n++) {
		x = kv_gpus_lookup(g, *n);
		CHECK(x != NULL);
		if (!x)
			continue;
		CHECK_NEAR(x->fp8_tflops, 2 * x->bf16_tflops, 0.15);
		CHECK_NEAR(x->fp4_tflops, 8 * x->bf16_tflops, 0.5);
	}
	/* the RTX PRO 6000's editions: the same 97887 MiB; the server's
	 * memory slower */
	const struct kv_gpu *ws = kv_gpus_lookup(g, "rtx-pro-6000"),
			    *se = kv_gpus_lookup(g, "rtx-pro-6000-server");
	CHECK(ws && se && ws->memory_bytes == 97887ULL << 20 &&
	      se->memory_bytes == ws->memory_bytes);
	CHECK(ws && se && ws->bandwidth_gbps == 1792 &&
	      se->bandwidth_gbps == 1597);
	CHECK(ws && ws->bf16_tflops == 500); /* full rate: 4000 / 8 */
	/* a Mac: its RAM, unified, no links */
	x = kv_gpus_lookup(g, "m4-max-128gb");
	CHECK(x && x->unified && x->memory_bytes == 128ULL << 30 &&
	      x->bandwidth_gbps == 546 && x->interconnect_gbps == 0);
	x = kv_gpus_lookup(g, "m3-ultra-512gb");
	CHECK(x && x->unified && x->bandwidth_gbps == 819);
	CHECK(x && kv_gpu_wired_default(x->memory_bytes) == 384ULL << 30);
}

int main(void)
{
	char err[KV_ERRLEN], list[1024];
	struct kv_gpus *g = NULL;
	CHECK(kv_gpus_load("configs/gpus.json", &g, err) == 0);
	if (!g) {
		fprintf(stderr, "%s\n", err);
		return test_done("gpu");
	}
	CHECK(g->n >= 12);
	const struct kv_gpu *h = kv_gpus_lookup(g, "h100-sxm");
	CHECK(h != NULL);
	if (h) {
		CHECK_U64(h->memory_bytes, 81559ULL << 20); /* nvidia-smi */
		CHECK_NEAR(h->bandwidth_gbps, 3350, 0);
		CHECK_NEAR(h->bf16_tflops, 989.5, 0);
		CHECK_NEAR(h->fp8_tflops, 1979, 0);
		/* NVLink 4's 900 GB/s counts both directions */
		CHECK_NEAR(h->interconnect_gbps, 450, 0);
		CHECK_STR(h->interconnect, "NVLink 4, 18 links");
		CHECK(h->bandwidth_efficiency == 0 && h->threads == 0);
	}
	CHECK_NEAR(kv_gpu_tflops(h, KV_DTYPE_BF16), 989.5, 0);
	CHECK_NEAR(kv_gpu_tflops(h, KV_DTYPE_F32), 989.5, 0);
	CHECK_NEAR(kv_gpu_tflops(h, KV_DTYPE_FP8), 1979, 0);
	/* weight-only int4 is widened to 16 bits (Marlin): bf16's rate */
	CHECK_NEAR(kv_gpu_tflops(h, KV_DTYPE_INT4), 989.5, 0);
	CHECK_NEAR(kv_gpu_tflops(NULL, KV_DTYPE_BF16), 0, 0);
	/* a quantization's compute: fp8 checkpoints in fp8, NVFP4 in fp4
	 * where the GPU has it (else 16 bits), MXFP4 against fp8
	 * activations on a GPU with fp4, AWQ and GPTQ in 16 bits */
	struct kv_quant q = {.fmt = KV_QUANT_FP8};
	CHECK(kv_gpu_compute(h, KV_DTYPE_BF16, &q) == KV_COMPUTE_FP8);
	q.fmt = KV_QUANT_NVFP4;
	CHECK(kv_gpu_compute(h, KV_DTYPE_BF16, &q) == KV_COMPUTE_BF16);
	q.fmt = KV_QUANT_MXFP4;
	CHECK(kv_gpu_compute(h, KV_DTYPE_BF16, &q) == KV_COMPUTE_BF16);
	q.fmt = KV_QUANT_AWQ;
	CHECK(kv_gpu_compute(h, KV_DTYPE_BF16, &q) == KV_COMPUTE_BF16);
	CHECK(kv_gpu_compute(h, KV_DTYPE_INT8, NULL) == KV_COMPUTE_FP8);
	const struct kv_gpu *b = kv_gpus_lookup(g, "b200");
	CHECK(b && b->fp4_tflops == 9000);
	q.fmt = KV_QUANT_NVFP4;
	CHECK(kv_gpu_compute(b, KV_DTYPE_BF16, &q) == KV_COMPUTE_FP4);
	CHECK_NEAR(kv_gpu_peak(b, KV_COMPUTE_FP4), 9000, 0);
	q.fmt = KV_QUANT_MXFP4;
	CHECK(kv_gpu_compute(b, KV_DTYPE_BF16, &q) == KV_COMPUTE_FP8);
	CHECK_NEAR(kv_gpu_peak(h, KV_COMPUTE_FP4), 989.5, 0); /* none */
	CHECK(kv_gpus_lookup(g, "H100") == h);      /* alias, any case */
	CHECK(kv_gpus_lookup(g, "h100_sxm5") == h); /* '_' reads as '-' */
	const struct kv_gpu *a = kv_gpus_lookup(g, "a100-80gb");
	CHECK(a && a->memory_bytes == 80ULL << 30 && a->fp8_tflops == 0);
	CHECK_NEAR(kv_gpu_tflops(a, KV_DTYPE_FP8), 312, 0); /* no fp8 */
	const struct kv_gpu *m = kv_gpus_lookup(g, "mi300x");
	CHECK(m && m->memory_bytes == 206141652992ULL);
	CHECK(kv_gpus_lookup(g, "h200") &&
	      kv_gpus_lookup(g, "h200")->memory_bytes == 143771ULL << 20);
	static const char *const need[] = {"a10g", "l4", "l40s", "a100-40gb",
					   "h100-pcie", "b200", "rtx-4090",
					   NULL};
	for (const char *const *n = need; *n; n++)
		CHECK(kv_gpus_lookup(g, *n) != NULL);
	CHECK(kv_gpus_lookup(g, "tpu-v5") == NULL);
	for (size_t i = 0; i < g->n; i++) {
		const struct kv_gpu *x = &g->gpu[i];
		CHECK(x->source[0] != '\0');
		/* every discrete GPU says its links; a Mac has none */
		CHECK(x->unified || x->interconnect_gbps > 0);
		CHECK(x->unified || x->interconnect[0] != '\0');
		CHECK(!x->unified || (!x->interconnect_gbps &&
				      !x->fp8_tflops && !x->fp4_tflops));
	}
	new_cards(g);
	/* a PCIe card as it comes: PCIe 4.0 x16, 32 GB/s each way */
	CHECK_NEAR(kv_gpus_lookup(g, "a100-80gb-pcie")->interconnect_gbps, 32,
		   0);
	CHECK_NEAR(a ? a->interconnect_gbps : 0, 300, 0); /* NVLink 3 */
	CHECK_NEAR(m ? m->interconnect_gbps : 0, 448, 0); /* 7 x 64 */
	CHECK_HAS(kv_gpus_list(g, list, sizeof list), "h100-sxm, ");
	kv_gpus_free(g);
	kv_gpus_free(NULL);

	/* bad tables */
	CHECK(parse_err("{", err) == KV_EINVAL);
	CHECK_STR(err, "t.json: not JSON: syntax error at line 1, column 1, "
		       "near '{'");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\","
			"\"memory_bytes\":080,\"bandwidth_gbps\":1}]",
			err) == KV_EINVAL);
	CHECK_STR(err, "t.json: not JSON: malformed number at line 1, column "
		       "42, near '080,\"bandwidth_gbps\":1}'");
	CHECK(parse_err("{\"gpus\":[]}", err) == KV_EINVAL);
	CHECK_HAS(err, "gpus: must be a non-empty list");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\","
			"\"memory_bytes\":-1,\"bandwidth_gbps\":1}]",
			err) == KV_EINVAL);
	CHECK_STR(err, "t.json: gpus[0].memory_bytes: must be a positive "
		       "number");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\","
			"\"memory_bytes\":1.5,\"bandwidth_gbps\":1}]",
			err) == KV_EINVAL);
	CHECK_HAS(err, "whole number of bytes");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\","
			"\"memory_bytes\":1}]",
			err) == KV_EINVAL);
	CHECK_STR(err, "t.json: gpus[0].bandwidth_gbps: missing");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\",\"memory_bytes\":1,"
			"\"bandwidth_gbps\":1},{\"name\":\"y\",\"aliases\":"
			"[\"X\"],\"source\":\"s\",\"memory_bytes\":1,"
			"\"bandwidth_gbps\":1}]",
			err) == KV_EINVAL);
	CHECK_HAS(err, "gpus[1]: name 'X' is already used by 'x'");
	CHECK(parse_err("[{\"name\":7}]", err) == KV_EINVAL);
	CHECK_HAS(err, "gpus[0].name: must be a string");

	/* the optional fields: read when given, 0 or "" when not */
	const char *full = ONE(",\"interconnect_gbps\":450,\"interconnect\":"
			       "\"NVLink 4, 18 links\",\"bandwidth_efficiency\":"
			       "0.75,\"flops_efficiency\":1,\"threads\":8");
	CHECK(kv_gpus_parse(full, strlen(full), "t.json", &g, err) == 0);
	if (g) {
		CHECK_NEAR(g->gpu[0].interconnect_gbps, 450, 0);
		CHECK_STR(g->gpu[0].interconnect, "NVLink 4, 18 links");
		CHECK_NEAR(g->gpu[0].bandwidth_efficiency, 0.75, 0);
		CHECK_NEAR(g->gpu[0].flops_efficiency, 1, 0);
		CHECK_U64(g->gpu[0].threads, 8);
	}
	kv_gpus_free(g);
	const char *nulls = ONE(",\"interconnect_gbps\":null,\"interconnect\":"
				"null,\"bandwidth_efficiency\":null,"
				"\"flops_efficiency\":null,\"threads\":null");
	CHECK(kv_gpus_parse(nulls, strlen(nulls), "t.json", &g, err) == 0);
	if (g) {
		CHECK(g->gpu[0].interconnect_gbps == 0 &&
		      !g->gpu[0].interconnect[0] &&
		      g->gpu[0].bandwidth_efficiency == 0 &&
		      g->gpu[0].flops_efficiency == 0 && g->gpu[0].threads == 0);
	}
	kv_gpus_free(g);
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ONE(",\"interconnect_gbps\":0"),
		 "t.json: gpus[0].interconnect_gbps: must be a positive number"},
		{ONE(",\"interconnect_gbps\":\"900\""),
		 "t.json: gpus[0].interconnect_gbps: must be a positive number"},
		{ONE(",\"interconnect\":18"),
		 "t.json: gpus[0].interconnect: must be a string of 1 to 63 "
		 "characters"},
		{ONE(",\"interconnect\":\"\""),
		 "t.json: gpus[0].interconnect: must be a string of 1 to 63 "
		 "characters"},
		{ONE(",\"serial_fraction\":1.5"),
		 "t.json: gpus[0].serial_fraction: must be a share in [0, 1]"},
		{ONE(",\"serial_fraction\":-0.1"),
		 "t.json: gpus[0].serial_fraction: must be a share in [0, 1]"},
		{ONE(",\"decode_tflops\":0"),
		 "t.json: gpus[0].decode_tflops: must be a positive number"},
		{ONE(",\"bandwidth_efficiency\":2.2"),
		 "t.json: gpus[0].bandwidth_efficiency: must be an efficiency in "
		 "(0, 2]"},
		{ONE(",\"bandwidth_efficiency\":0"),
		 "t.json: gpus[0].bandwidth_efficiency: must be an efficiency in "
		 "(0, 2]"},
		{ONE(",\"flops_efficiency\":-0.5"),
		 "t.json: gpus[0].flops_efficiency: must be an efficiency in "
		 "(0, 2]"},
		{ONE(",\"flops_efficiency\":\"high\""),
		 "t.json: gpus[0].flops_efficiency: must be an efficiency in "
		 "(0, 2]"},
		{ONE(",\"threads\":0"),
		 "t.json: gpus[0].threads: must be a whole number from 1 to "
		 "65536"},
		{ONE(",\"threads\":2.5"),
		 "t.json: gpus[0].threads: must be a whole number from 1 to "
		 "65536"},
		{ONE(",\"threads\":65537"),
		 "t.json: gpus[0].threads: must be a whole number from 1 to "
		 "65536"},
		{ONE(",\"threads\":\"8\""),
		 "t.json: gpus[0].threads: must be a whole number from 1 to "
		 "65536"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK(parse_err(bad[i].json, err) == KV_EINVAL);
		CHECK_STR(err, bad[i].msg);
	}

	/* unified memory, and whose efficiencies an entry borrows */
	const char *mac = "[{\"name\":\"x\",\"source\":\"s\","
			  "\"memory_bytes\":1,\"bandwidth_gbps\":1,"
			  "\"unified_memory\":true,\"efficiency_like\":\"Y\"},"
			  "{\"name\":\"y\",\"source\":\"s\","
			  "\"memory_bytes\":1,\"bandwidth_gbps\":1}]";
	CHECK(kv_gpus_parse(mac, strlen(mac), "t.json", &g, err) == 0);
	if (g) {
		CHECK(g->gpu[0].unified && !g->gpu[1].unified);
		CHECK_STR(g->gpu[0].efficiency_like, "Y");
		CHECK(!g->gpu[1].efficiency_like[0]);
	}
	kv_gpus_free(g);
	CHECK(parse_err(ONE(",\"unified_memory\":\"yes\""), err) ==
	      KV_EINVAL);
	CHECK_STR(err, "t.json: gpus[0].unified_memory: must be true or "
		       "false");
	CHECK(parse_err(ONE(",\"efficiency_like\":\"h100\""), err) ==
	      KV_EINVAL);
	CHECK_STR(err, "t.json: gpus[0].efficiency_like: 'h100' is no GPU "
		       "of this table");
	CHECK(parse_err(ONE(",\"efficiency_like\":3"), err) == KV_EINVAL);
	CHECK_STR(err, "t.json: gpus[0].efficiency_like: must be a string "
		       "of 1 to 31 characters");

	CHECK(kv_gpus_load("/nonexistent/gpus.json", &g, err) == KV_EIO);
	CHECK(g == NULL);
	wired();
	local_machine();
	profile_entry();
	profile_table();
	return test_done("gpu");
}
