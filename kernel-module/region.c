// SPDX-License-Identifier: GPL-2.0
/*
 * lrb.ko persistent channels: memory reserved at boot with
 * reserve_mem=SIZE:ALIGN:NAME, in which a channel is laid out so that its
 * last records survive a crash and a warm reboot; the previous run a region
 * holds, recovered by lib/region.c and shown as the read-only channel
 * <channel>.previous; and the release that lets the region serve again.
 *
 * A region holds one run at a time. Until its previous run is released,
 * no new run is laid out over it (unless overwrite_previous=1), so every
 * boot and every reload finds the same previous run.
 */
#include <linux/io.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include <lrb/metadata.h>
#include "lrb_module.h"

static bool lrb_overwrite_previous;
module_param_named(overwrite_previous, lrb_overwrite_previous, bool, 0644);
MODULE_PARM_DESC(overwrite_previous,
		 "lay a persistent channel out over a previous run not yet released (its copy stays readable as <channel>.previous)");

/* reserve_mem names are shorter than this (RESERVE_MEM_NAME_SIZE). */
#define LRB_KREGION_NAME_MAX 16

/**
 * struct lrb_kregion - a region reserved at boot, mapped
 * @node: in lrb_kregions
 * @name: its reserve_mem name
 * @start: physical address
 * @size: bytes
 * @base: where it is mapped
 * @user: the channel laid out in it, if any
 * @previous: the channel showing the previous run recovered from it
 * @held: the region still holds the run @previous shows: it is not
 *	laid out afresh until released
 */
struct lrb_kregion {
	struct list_head node;
	char name[LRB_KREGION_NAME_MAX];
	phys_addr_t start;
	phys_addr_t size;
	void *base;
	struct lrb_kchan *user;
	struct lrb_kchan *previous;
	bool held;
};

/* Regions mapped, never unmapped before the module goes. */
static LIST_HEAD(lrb_kregions);
/* Serialises the use of regions; taken before the channel list's lock. */
static DEFINE_MUTEX(lrb_kregions_lock);

const char *lrb_kregion_name(const struct lrb_kregion *r)
{
	return r->name;
}

/*
 * Map the region @name. Write-back cached, as any memory: a warm reboot
 * keeps RAM, and the CPU writes its caches back on the way (qemu has
 * none). It is RAM in the direct map, so its pages have struct pages, which
 * mmap and splice of the channel's files need.
 */
static struct lrb_kregion *lrb_kregion_get(const char *name)
{
	struct lrb_kregion *r;
	phys_addr_t start, size;

	list_for_each_entry(r, &lrb_kregions, node)
		if (!strcmp(r->name, name))
			return r;
	if (strlen(name) >= LRB_KREGION_NAME_MAX ||
	    !reserve_mem_find_by_name(name, &start, &size)) {
		pr_err("lrb: region %s: not found: boot with reserve_mem=SIZE:4096:%s on the kernel command line (Documentation/persistent.rst)\n",
		       name, name);
		return ERR_PTR(-ENOENT);
	}
	if (!PAGE_ALIGNED(start) || size < PAGE_SIZE) {
		pr_err("lrb: region %s: %pa bytes at %pa: reserve at least a page, page aligned (reserve_mem=SIZE:4096:%s)\n",
		       name, &size, &start, name);
		return ERR_PTR(-ENOSPC);
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	/* UML has no memremap(); no reserve_mem there either */
	if (IS_ENABLED(CONFIG_HAS_IOMEM))
		r->base = memremap(start, size, MEMREMAP_WB);
	if (!r->base) {
		pr_err("lrb: region %s: cannot map %pa bytes at %pa\n", name,
		       &size, &start);
		kfree(r);
		return ERR_PTR(-ENOMEM);
	}
	strscpy(r->name, name, sizeof(r->name));
	r->start = start;
	r->size = size;
	list_add(&r->node, &lrb_kregions);
	pr_info("lrb: region %s: %pa bytes at %pa\n", name, &size, &start);
	return r;
}

/*
 * Recover the previous run @r holds, if any, as <@kc's name>.previous,
 * validating its records as the events of @attr.
 */
static int lrb_kregion_recover(struct lrb_kregion *r, struct lrb_kchan *kc,
			       const struct lrb_kchan_attr *attr)
{
	struct lrb_metadata_attr events = {
		.events = attr->events,
		.nr_events = attr->nr_events,
	};
	struct lrb_decoder dec = {
		.payload_size = lrb_events_payload_size,
		.priv = &events,
	};
	u64 kept = 0, packets = 0, drop_p = 0, drop_r = 0, drop_b = 0, us;
	char name[sizeof(kc->name)];
	struct lrb_recovery *rec;
	struct lrb_kchan *prev;
	const char *why;
	unsigned int b, c;
	u64 t0;
	int ret;

	t0 = ktime_get_ns();
	ret = lrb_region_recover(r->base, r->size, &dec, &rec, &why);
	if (ret == -ENODATA) {
		pr_info("lrb: region %s: no previous run to recover (%s): laid out afresh\n",
			r->name, why);
		return 0;
	}
	if (ret) {
		pr_err("lrb: region %s: cannot recover its previous run: %pe; the region is left as it is: free memory and load the client again\n",
		       r->name, ERR_PTR(ret));
		return ret;
	}
	us = div_u64(ktime_get_ns() - t0, NSEC_PER_USEC);
	/* an older previous run of the region goes: it may have the name */
	if (r->previous) {
		lrb_kchan_remove_previous(r->previous);
		r->previous = NULL;
	}
	snprintf(name, sizeof(name), "%.*s" LRB_PREVIOUS_SUFFIX, LRB_KCHAN_NAME_MAX,
		 kc->name);
	prev = lrb_kchan_create_previous(name, rec, r, us);
	if (IS_ERR(prev)) {
		pr_err("lrb: region %s: cannot publish its previous run as channel %s: %pe; the region is left as it is\n",
		       r->name, name, prev);
		lrb_recovery_free(rec);
		return PTR_ERR(prev);
	}
	for (b = 0; b < rec->nr_bufs; b++) {
		const struct lrb_recovery_stats *st = &rec->bufs[b].stats;

		if (st->untrusted)
			pr_warn("lrb: region %s: cpu%u's loss counters in the previous run's region are corrupt (mask 0x%x, names in %s/stats): its discarded counts use what its packets counted\n",
				r->name, b, st->untrusted, name);
		kept += st->records;
		packets += st->packets;
		for (c = 0; c < LRB_DROP_NR; c++) {
			drop_p += st->drop_packets[c];
			drop_r += st->drop_records[c];
			drop_b += st->drop_bytes[c];
		}
	}
	pr_info("lrb: region %s: previous run %llu recovered as channel %s: %llu records in %llu packets kept; dropped %llu packets, %llu records, %llu bytes; in %llu us\n",
		r->name, rec->header.run_id, name, kept, packets, drop_p,
		drop_r, drop_b, us);
	if (rec->nr_bufs > nr_cpu_ids)
		pr_warn("lrb: region %s: the previous run had %u buffers, this boot %u CPUs: buffers from cpu%u on are not shown (their counts are in %s/stats)\n",
			r->name, rec->nr_bufs, nr_cpu_ids, nr_cpu_ids, name);
	lrb_recovery_free(rec);
	r->previous = prev;
	r->held = true;
	return 0;
}

#ifdef LRB_FAILPOINTS
/*
 * Test-only, in lrb.ko as tests/vm builds it (LRB_FAILPOINTS=y): writing
 * "NAME OFFSET LEN" to parameter scribble overwrites LEN bytes of region
 * NAME (mapped already: a channel used it) from OFFSET with pseudo-random
 * bytes, as a crash or stray writes could leave it. The region is then
 * recovered afresh by the next channel to use it.
 */
static int lrb_kregion_scribble(const char *val, const struct kernel_param *kp)
{
	char name[LRB_KREGION_NAME_MAX];
	struct lrb_kregion *r;
	unsigned long off, len, i;
	u32 x = 0x9e3779b9;
	int ret = -ENOENT;

	if (sscanf(val, "%15s %lu %lu", name, &off, &len) != 3)
		return -EINVAL;
	mutex_lock(&lrb_kregions_lock);
	list_for_each_entry(r, &lrb_kregions, node) {
		if (strcmp(r->name, name))
			continue;
		ret = -ERANGE;
		if (r->user || off > r->size || len > r->size - off)
			break;
		for (i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			((u8 *)r->base)[off + i] = x;
		}
		r->held = false;
		pr_info("lrb: region %s: %lu bytes from %lu scribbled over (scribble)\n",
			name, len, off);
		ret = 0;
		break;
	}
	mutex_unlock(&lrb_kregions_lock);
	return ret;
}

static const struct kernel_param_ops lrb_scribble_ops = {
	.set = lrb_kregion_scribble,
};
module_param_cb(scribble, &lrb_scribble_ops, NULL, 0200);
MODULE_PARM_DESC(scribble,
		 "test only: \"NAME OFFSET LEN\" overwrites bytes of a region with random ones");
#endif

/**
 * lrb_kregion_attach() - give a persistent channel its region
 * @kc: the channel being created, its metadata made
 * @attr: its attributes, with the region's name
 * @chan_attr: receives the region, its size, the run id and metadata
 *
 * Recovers the previous run the region holds first (unless it is already
 * shown and not released).
 *
 * Return: 0, or -ENOENT, -ENOSPC, -EBUSY, -EINVAL, -ENOMEM (the kernel
 * log says what and what to do).
 */
int lrb_kregion_attach(struct lrb_kchan *kc, const struct lrb_kchan_attr *attr,
		       struct lrb_chan_attr *chan_attr)
{
	struct lrb_kregion *r;
	u64 need;
	int ret = 0;

	need = lrb_region_size(&kc->cfg, chan_attr);
	if (!need) {
		pr_err("lrb: channel %s: only a persistent overwrite configuration (cfg.persistent) can use region %s\n",
		       kc->name, attr->region);
		return -EINVAL;
	}
	mutex_lock(&lrb_kregions_lock);
	r = lrb_kregion_get(attr->region);
	if (IS_ERR(r)) {
		ret = PTR_ERR(r);
		goto out;
	}
	if (r->user) {
		pr_err("lrb: region %s: channel %s uses it: give channel %s another region\n",
		       r->name, r->user->name, kc->name);
		ret = -EBUSY;
		goto out;
	}
	if (need > r->size) {
		pr_err("lrb: region %s: %pa bytes, channel %s needs %llu: reserve more (reserve_mem=%lluM:4096:%s) or lower its subbuf_size or num_subbuf\n",
		       r->name, &r->size, kc->name, need,
		       div_u64(need + SZ_1M - 1, SZ_1M), r->name);
		ret = -ENOSPC;
		goto out;
	}
	if (!r->held) {
		ret = lrb_kregion_recover(r, kc, attr);
		if (ret)
			goto out;
	}
	if (r->held && !READ_ONCE(lrb_overwrite_previous)) {
		pr_warn("lrb: region %s: holds previous run %llu, not released: channel %s cannot use it (read %s, then release it: echo 1 > /dev/lrb/%s/release; or load lrb.ko with overwrite_previous=1)\n",
			r->name, r->previous->recovered->run_id, kc->name,
			r->previous->name, r->previous->name);
		ret = -EBUSY;
		goto out;
	}
	if (r->held)
		pr_info("lrb: region %s: overwriting previous run %llu (overwrite_previous=1): channel %s keeps its copy\n",
			r->name, r->previous->recovered->run_id,
			r->previous->name);
	r->held = false;
	r->user = kc;
	kc->region = r;
	chan_attr->region = r->base;
	chan_attr->region_size = r->size;
	chan_attr->run_id = ktime_get_real_ns();
	chan_attr->metadata = kc->metadata;
	pr_info("lrb: region %s: channel %s laid out in it, run %llu\n",
		r->name, kc->name, chan_attr->run_id);
out:
	mutex_unlock(&lrb_kregions_lock);
	return ret;
}

/**
 * lrb_kregion_detach() - a persistent channel is gone, readers included
 * @kc: the channel
 *
 * Its last run stays in the region: the next channel to use the region
 * recovers it first.
 */
void lrb_kregion_detach(struct lrb_kchan *kc)
{
	mutex_lock(&lrb_kregions_lock);
	if (kc->region->user == kc)
		kc->region->user = NULL;
	mutex_unlock(&lrb_kregions_lock);
}

/**
 * lrb_kregion_release() - let a previous run go (its release file)
 * @kc: the previous run's channel
 *
 * The region is marked released, so that the next channel to use it (in
 * this boot or the next) lays it out afresh; the channel stays readable
 * until lrb.ko unloads or the region's next run is recovered.
 */
void lrb_kregion_release(struct lrb_kchan *kc)
{
	struct lrb_kregion *r = kc->region;

	mutex_lock(&lrb_kregions_lock);
	if (!kc->recovered->released) {
		if (r->previous == kc && r->held) {
			lrb_region_release(r->base);
			r->held = false;
		}
		WRITE_ONCE(kc->recovered->released, true);
		pr_info("lrb: region %s: previous run %llu released (channel %s stays readable)\n",
			r->name, kc->recovered->run_id, kc->name);
	}
	mutex_unlock(&lrb_kregions_lock);
}

/* Module exit: no client is left; remove the previous runs, unmap. */
void lrb_kregion_exit(void)
{
	struct lrb_kregion *r, *tmp;

	list_for_each_entry_safe(r, tmp, &lrb_kregions, node) {
		if (r->previous)
			lrb_kchan_remove_previous(r->previous);
		if (IS_ENABLED(CONFIG_HAS_IOMEM))
			memunmap(r->base);
		list_del(&r->node);
		kfree(r);
	}
}
