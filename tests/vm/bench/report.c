// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-consumer-bench: the table of MB/s drained per CPU, then every figure
 * as a "BENCH<tab>consumer-vm<tab>key<tab>value<tab>unit<tab>label" line.
 *
 * A CPU's figure is the best of its drains' MB/s (bytes drained / time
 * draining, 1 MB = 10^6 bytes): the host is shared, and the time a vCPU
 * spends descheduled by the host is no cost of the consumer, but the guest
 * cannot tell it apart (TCG has no steal time); the longer the drain, the
 * likelier it is hit. So, as the other benchmarks do, a noisy host widens
 * the spread, which the table shows as the median and quartiles of all
 * the drains of a row, and leaves the figure alone.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CB_SECTION "consumer-vm"

static int cb_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @q quantile (0..1) of @n values, sorted in place; 1 is the best. */
static double cb_quantile(double *v, unsigned int n, double q)
{
	double pos = q * (n - 1);
	unsigned int i = pos;

	qsort(v, n, sizeof(*v), cb_cmp);
	return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[i];
}

/* The @q quantile of every drain of @t's @ncpu CPUs, pooled; -1 if none. */
static double cb_pooled(const struct cb_total *t, unsigned int ncpu, double q)
{
	unsigned int cpu, n = 0;
	double *v, ret = -1;

	v = malloc(ncpu * t[0].fills * sizeof(*v));
	if (v) {
		for (cpu = 0; cpu < ncpu; cpu++) {
			memcpy(v + n, t[cpu].mbps, t[cpu].fills * sizeof(*v));
			n += t[cpu].fills;
		}
		ret = cb_quantile(v, n, q);
	}
	free(v);
	return ret;
}

void cb_report(FILE *out, struct cb_total t[CB_NR_VIA][CB_NR_DEST][VC_MAX_CPUS],
	       unsigned int ncpu, const struct lrb_buf_info *info)
{
	const enum cb_via others[] = { CB_SPLICE, CB_MMAP };
	double best[CB_NR_VIA][CB_NR_DEST][VC_MAX_CPUS];
	double mean[CB_NR_VIA][CB_NR_DEST];
	/* every (consumer, destination, CPU) drained as many rings */
	const struct cb_total *first = &t[0][0][0], *r;
	unsigned int via, dest, cpu, i;

	for (via = 0; via < CB_NR_VIA; via++) {
		for (dest = 0; dest < CB_NR_DEST; dest++) {
			mean[via][dest] = 0;
			for (cpu = 0; cpu < ncpu; cpu++) {
				r = &t[via][dest][cpu];
				best[via][dest][cpu] =
					cb_quantile(r->mbps, r->fills, 1);
				mean[via][dest] += best[via][dest][cpu] / ncpu;
			}
		}
	}

	fprintf(out, "MB/s drained per CPU (1 MB = 10^6 bytes), %u vCPUs under qemu TCG: the best of\n",
		ncpu);
	fprintf(out, "%u drains of a full ring (%llu x %llu KiB), %.1f MB drained per CPU and row\n\n",
		first->fills, (ull)info->num_subbuf,
		(ull)info->subbuf_size / 1024, first->bytes / 1e6);
	fprintf(out, "%-8s %-11s", "consumer", "destination");
	for (cpu = 0; cpu < ncpu; cpu++)
		fprintf(out, " %6s%-2u", "cpu", cpu);
	fprintf(out, " %8s   %s\n", "mean", "all drains: q1 median q3");
	for (dest = 0; dest < CB_NR_DEST; dest++) {
		for (via = 0; via < CB_NR_VIA; via++) {
			fprintf(out, "%-8s %-11s", cb_via_name[via],
				cb_dest_name[dest]);
			for (cpu = 0; cpu < ncpu; cpu++)
				fprintf(out, " %8.1f", best[via][dest][cpu]);
			fprintf(out, " %8.1f   %.1f %.1f %.1f\n", mean[via][dest],
				cb_pooled(t[via][dest], ncpu, 0.25),
				cb_pooled(t[via][dest], ncpu, 0.5),
				cb_pooled(t[via][dest], ncpu, 0.75));
		}
	}
	fprintf(out, "\nratio of the means    %11s %11s\n",
		cb_dest_name[CB_NULL], cb_dest_name[CB_TMPFS]);
	for (i = 0; i < ARRAY_SIZE(others); i++)
		fprintf(out, "%-6s / read        %11.2f %11.2f\n",
			cb_via_name[others[i]],
			mean[others[i]][CB_NULL] / mean[CB_READ][CB_NULL],
			mean[others[i]][CB_TMPFS] / mean[CB_READ][CB_TMPFS]);
	fputc('\n', out);

	for (dest = 0; dest < CB_NR_DEST; dest++) {
		for (via = 0; via < CB_NR_VIA; via++) {
			fprintf(out, "BENCH\t%s\t%s_%s_mbps\t%.1f\tMB/s\t%s, %s, best of %u drains, mean of %u vCPUs\n",
				CB_SECTION, cb_via_name[via], cb_dest_key[dest],
				mean[via][dest], cb_via_name[via],
				cb_dest_name[dest], first->fills, ncpu);
			for (cpu = 0; cpu < ncpu; cpu++)
				fprintf(out, "BENCH\t%s\t%s_%s_cpu%u_mbps\t%.1f\tMB/s\t%s, %s, best of %u drains, vCPU %u\n",
					CB_SECTION, cb_via_name[via],
					cb_dest_key[dest], cpu,
					best[via][dest][cpu], cb_via_name[via],
					cb_dest_name[dest], first->fills, cpu);
		}
		for (i = 0; i < ARRAY_SIZE(others); i++)
			fprintf(out, "BENCH\t%s\t%s_vs_read_%s\t%.2f\tx\t%s / read, %s, mean MB/s\n",
				CB_SECTION, cb_via_name[others[i]],
				cb_dest_key[dest],
				mean[others[i]][dest] / mean[CB_READ][dest],
				cb_via_name[others[i]], cb_dest_name[dest]);
	}
	fflush(out);
}
