/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb.ko channels with files: what a kernel client calls to publish a
 * channel to user space as /dev/lrb/<name>/cpuN (one per possible CPU),
 * /dev/lrb/<name>/metadata (CTF 1.8 metadata) and /dev/lrb/<name>/stats,
 * with the channel's switch and read timers and CPU hotplug handled.
 *
 * Writers use the fast paths of lrb/lrb.h on lrb_kchan_chan()'s channel.
 */
#ifndef _LRB_KCHAN_H
#define _LRB_KCHAN_H

#include <lrb/lrb.h>
#include <lrb/metadata.h>

/* Longest channel name; names use [A-Za-z0-9_-] only. */
#define LRB_KCHAN_NAME_MAX 32

/**
 * struct lrb_kchan_attr - a channel with files
 * @name: channel name: the directory under /dev/lrb
 * @chan: geometry (nr_cpus is filled in: every possible CPU), stream id
 * @switch_timer_us: every this many microseconds, each CPU closes its
 *	partly filled packet so that readers get stale data; 0 for never
 * @read_timer_us: with %LRB_WAKEUP_BY_TIMER, how often sleeping readers
 *	are checked and woken (required then); must be 0 otherwise
 * @clock_freq: frequency in Hz of the config's clock_read; 0 means 1 GHz
 *	(nanoseconds, as lrb_clock_default())
 * @events: the client's events (LRB_EVENT()'s lrb_event_<name>), which
 *	the metadata declares; the descriptions are read at creation only
 * @nr_events: how many
 * @region: with a persistent configuration (cfg->persistent, overwrite
 *	mode), the name of the memory reserved at boot with
 *	reserve_mem=SIZE:ALIGN:NAME that the channel is laid out in; the
 *	previous run found there is first recovered as the read-only channel
 *	<name>.previous (Documentation/persistent.rst); NULL otherwise
 */
struct lrb_kchan_attr {
	const char *name;
	struct lrb_chan_attr chan;
	unsigned int switch_timer_us;
	unsigned int read_timer_us;
	u64 clock_freq;
	const struct lrb_event_desc *const *events;
	unsigned int nr_events;
	const char *region;
};

struct lrb_kchan;

/**
 * lrb_kchan_create() - create a per-CPU channel and publish its files
 * @cfg: the client's configuration (per-CPU allocation); the channel keeps
 *	a copy, and writers pass @cfg itself to the fast paths
 * @attr: name, geometry, timers and metadata
 *
 * Files are published before the last steps: if one of those fails, a
 * reader that opened a file meanwhile is woken and gets -ENODEV.
 *
 * Context: process context; sleeps (allocations, device nodes, hotplug).
 * Return: the channel, or an ERR_PTR(): -EINVAL for a bad name or setting
 * (the kernel log says which), -EEXIST if the name is taken, -ENOMEM.
 * With @attr->region also: -ENOENT if no memory of that name was reserved
 * at boot, -ENOSPC if it is too small, -EBUSY if another channel uses it
 * or it holds a previous run not yet released (recovered as
 * <name>.previous; lrb.ko's overwrite_previous=1 lays the new run out over
 * it instead): a client may then create the channel without the region.
 */
struct lrb_kchan *lrb_kchan_create(const struct lrb_config *cfg,
				   const struct lrb_kchan_attr *attr);

/**
 * lrb_kchan_chan() - the channel writers write
 * @kc: channel from lrb_kchan_create()
 *
 * Context: any context; does not sleep.
 * Return: the lrb channel, for lrb_reserve() and friends.
 */
struct lrb_chan *lrb_kchan_chan(struct lrb_kchan *kc);

/**
 * lrb_kchan_destroy() - finalise a channel and remove its files
 * @kc: channel from lrb_kchan_create()
 *
 * The client must have stopped starting writes; writes in flight are
 * waited for. Every partly filled packet is closed, readers are woken, and
 * the device nodes go away. Files still open keep working: their readers
 * drain what is left, then read 0 bytes (end of file). The memory goes
 * when the last of them is closed.
 *
 * Context: process context; sleeps (CPU hotplug, RCU grace period, locks).
 */
void lrb_kchan_destroy(struct lrb_kchan *kc);

#endif /* _LRB_KCHAN_H */
