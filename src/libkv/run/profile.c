/*
 * profile.c - a GPU table entry for this machine, from a decode step and a
 * prefill measured on it (kvbench --profile): what kvfit then plans with.
 */
#include <stdio.h>
#include <time.h>

#include "kv/sweep.h"

const char kv_gpu_profile_note[] =
	"measured on this machine by kvbench --profile: bandwidth_gbps is "
	"the best pass of its read-bandwidth probe beside the decode step; "
	"bf16_tflops is the float32 sgemm rate (a CPU has no bf16 tensor "
	"rate; float32 is what the engine's matrix products run at), the "
	"best of three products; bandwidth_efficiency and flops_efficiency "
	"are the decode step's and the prefill's share of those (above 1 "
	"where a step outran its probe, up to 2); decode_tflops and serial_fraction "
	"make kvfit's times of the batched steps of 4 and 32 users the "
	"times measured; memory_bytes is MemTotal, the "
	"physical total (a run may take 9/10 of MemAvailable)";

int kv_gpu_profile(const struct kv_gpu *local, uint32_t threads,
		   const struct kv_bench_result *decode,
		   const struct kv_bench_result *prefill, time_t when,
		   const char *how, struct kv_gpu *out, char *err)
{
	const char *miss = !decode || !(decode->ref_gbps > 0) ||
					   !(decode->efficiency > 0)
				   ? "decode step and its bandwidth probe"
			   : !prefill || !(prefill->ref_gflops > 0) ||
					   !(prefill->efficiency > 0)
				   ? "prefill and its sgemm rate"
				   : NULL;
	if (!threads || threads > KV_GPU_MAX_THREADS)
		miss = "thread count from 1 to 65536";
	if (miss) {
		snprintf(err, KV_ERRLEN, "profile on %u thread%s: no %s",
			 threads, threads == 1 ? "" : "s", miss);
		return KV_EINVAL;
	}
	char date[32] = "?";
	struct tm tm;
	if (gmtime_r(&when, &tm))
		strftime(date, sizeof date, "%Y-%m-%d", &tm);
	*out = (struct kv_gpu){0};
	snprintf(out->name, sizeof out->name, "local-j%u", threads);
	snprintf(out->label, sizeof out->label, "%s", local->label);
	out->memory_bytes = local->memory_bytes;
	/* a step may outrun its probe (the engine's reads faster than
	 * the probe's, or from cache): kept, up to KV_GPU_EFF_MAX */
	double be = decode->efficiency, fe = prefill->efficiency;
	out->bandwidth_gbps = kv_gpu_sig(decode->ref_gbps, 4);
	out->bf16_tflops = kv_gpu_sig(prefill->ref_gflops / 1e3, 4);
	out->bandwidth_efficiency =
		kv_gpu_sig(be < KV_GPU_EFF_MAX ? be : KV_GPU_EFF_MAX, 3);
	out->flops_efficiency =
		kv_gpu_sig(fe < KV_GPU_EFF_MAX ? fe : KV_GPU_EFF_MAX, 3);
	out->threads = threads;
	snprintf(out->source, sizeof out->source,
		 "kvbench --profile, %s, %u thread%s%s%s", date, threads,
		 threads == 1 ? "" : "s", how && *how ? ", " : "",
		 how ? how : "");
	return 0;
}
