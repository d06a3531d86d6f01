/*
 * kvfit_split.c - kvfit's options for llama.cpp's split between the GPU
 * and host memory, checked together once the configs are read (an Ollama
 * model's num_gpu asks for one too); the host's figures where the options
 * give none; and the -ot rules read against each model.
 */
#include <string.h>

#include "kvfit.h"
#include "kv/machine.h"
#include "kv/units.h"

/* What a desktop's two channels of DDR5-4800 (76.8 GB/s) give a read
 * stream, about four fifths: the host's bandwidth where nothing says
 * (--host-bandwidth, --host-profile). */
#define HOST_GBPS 60.0
/* PCIe 4.0 x16, one direction: the link to the host where the GPU table
 * names none (an NVLink GPU's interconnect joins GPUs, not the host). */
#define LINK_GBPS 32.0

/* --host-profile: its "local" entry (the fastest thread count), else its
 * first. */
static int host_profile(struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	char err[KV_ERRLEN];
	int e = kv_gpus_load(a->host_profile, &a->host, err);
	if (e)
		return cli_kv_error(e, err);
	const struct kv_gpu *g = kv_gpus_lookup(a->host, "local");
	if (!g && a->host->n)
		g = &a->host->gpu[0];
	if (!g || !(g->bandwidth_gbps > 0))
		return cli_usage("--host-profile: %s: no entry with a "
				 "bandwidth (kvbench --profile FILE writes "
				 "one)",
				 a->host_profile);
	double be = g->bandwidth_efficiency > 0 ? g->bandwidth_efficiency : 1;
	double fe = g->flops_efficiency > 0 ? g->flops_efficiency : 1;
	if (!(o->host_gbps > 0))
		o->host_gbps = g->bandwidth_gbps * be;
	o->host_tflops = g->bf16_tflops * fe;
	if (!o->host_mem)
		o->host_mem = g->memory_bytes;
	return 0;
}

/* The host's figures the options leave: its bandwidth and memory (this
 * machine's available, KV_MEM_AVAILABLE where set, else unknown), the
 * GPU's link (its table's PCIe). */
static int host_defaults(struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	uint64_t avail, usable;
	char err[KV_ERRLEN];
	int e;
	if (a->host_profile && (e = host_profile(a)))
		return e;
	if (!(o->host_gbps > 0))
		o->host_gbps = HOST_GBPS;
	if (!o->host_mem) {
		if (kv_run_memory(&avail, &usable, err))
			return cli_usage("%s", err);
		o->host_mem = avail; /* 0: unknown */
	}
	/* the GPU's link to host memory as the host tier has it
	 * (--host-link, else gpus.json's host_link_gbps), or its PCIe
	 * interconnect, or a PCIe 4.0 x16's */
	o->link_gbps = a->off.link_gbps > 0 ? a->off.link_gbps
		       : o->gpu && o->gpu->interconnect_gbps > 0 &&
				 !strncmp(o->gpu->interconnect, "PCIe", 4)
			       ? o->gpu->interconnect_gbps
			       : LINK_GBPS;
	return 0;
}

int kvfit_split(struct args *a, struct kv_plan *pl, size_t np)
{
	struct kv_plan_opts *o = &a->o;
	const char *opt = a->split_opt[0] ? a->split_opt : "--solve layers";
	char err[KV_ERRLEN];
	int e;
	/* an Ollama model's num_gpu is its -ngl, where none is given, for
	 * llama.cpp's rows */
	bool lcpp = !o->server || o->server->by_layers;
	for (size_t i = 0; i < np && o->ngl == KV_NGL_UNSET && lcpp; i++)
		if (pl[i].m->run_ngl_given && !o->split) {
			o->split = true;
			opt = "num_gpu (its Ollama params)";
		}
	if (!o->split) {
		if (a->host_given && !a->params)
			return cli_usage("%s: sizes the host's part of a "
					 "split; give --n-gpu-layers, "
					 "--override-tensor, --cpu-moe, "
					 "--n-cpu-moe, --no-kv-offload or "
					 "--solve layers",
					 a->host_given);
		return 0;
	}
	if (a->params)
		return 0;
	if (a->ncalib)
		return cli_usage("%s: --calibrate fits a GPU's own rates, with "
				 "every weight on it; give no split",
				 opt);
	if (o->server && !o->server->by_layers)
		return cli_usage("%s: llama.cpp's split between the GPU and "
				 "host memory; give --engine llamacpp (a "
				 "GGUF's default) or all",
				 opt);
	if (o->pp > 1)
		return cli_usage("%s: a split between one GPU and host memory; "
				 "give --pp 1",
				 opt);
	bool ngl = o->ngl != KV_NGL_UNSET;
	if (o->solve == KV_PLAN_LAYERS &&
	    (ngl || (o->n_cpu_moe && o->n_cpu_moe != KV_CPU_MOE_ALL)))
		return cli_usage("--solve layers finds %s; give it or %s, not "
				 "both",
				 ngl ? "-ngl" : "--n-cpu-moe",
				 ngl ? "--n-gpu-layers" : "--n-cpu-moe");
	for (size_t i = 0; i < np; i++)
		if (o->n_cpu_moe && !pl[i].m->n_experts)
			return cli_usage("%s: %s has no experts (a dense "
					 "model); --n-gpu-layers puts its "
					 "layers in host memory",
					 o->n_cpu_moe == KV_CPU_MOE_ALL
						 ? "--cpu-moe"
						 : "--n-cpu-moe",
					 pl[i].m->name);
	if ((e = host_defaults(a)))
		return e;
	for (size_t i = 0; i < np; i++) {
		if ((e = kv_plan_place(o, &pl[i], err)))
			return cli_kv_error(e, err);
		for (size_t k = 0; k < o->not; k++)
			if (!pl[i].place.matched[k])
				cli_warn("%s: --override-tensor '%s' finds no "
					 "tensor",
					 pl[i].m->name, o->ot[k].pattern);
	}
	return 0;
}
