/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb.ko internals: channels published as files (kchan.c), the per-CPU
 * files (cpu_file.c), the channel-level files (chan_files.c), and what
 * main.c sets up for them all.
 */
#ifndef _LRB_MODULE_H
#define _LRB_MODULE_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/timer.h>
#include <linux/wait.h>

#include <lrb/kchan.h>
#include <lrb/region.h>

/**
 * struct lrb_kdev - a character device of a channel
 * @dev: the device (/dev/lrb/<channel>/<file>)
 * @cdev: its character device
 * @kc: the channel; each device holds a reference on it
 */
struct lrb_kdev {
	struct device dev;
	struct cdev cdev;
	struct lrb_kchan *kc;
};

/**
 * struct lrb_kbuf - a per-CPU buffer and the state of its file
 * @kdev: the device /dev/lrb/<channel>/cpuN
 * @buf: the buffer
 * @cpu: its CPU
 * @switch_timer: pinned to @cpu: closes the packet being filled
 * @read_timer: pinned to @cpu: wakes readers, if writers do not
 * @lock: serialises the reader's operations
 * @sb: the packet the reader holds, if @holding
 * @holding: the reader holds @sb
 * @by_ioctl: @sb was taken by ioctl (else by read or splice)
 * @cursor: read() and splice() progress in @sb
 * @watermark: complete packets poll() waits for
 * @last_discarded: events_discarded of the last packet taken
 * @last_ts_end: latest timestamp_end of the packets taken
 * @mapping: address space of the open file, whose mappings show @sb
 * @map_lock: orders page faults against the release of @sb
 * @map_slot: slot of pages a fault may map, if @map_valid
 * @map_valid: a packet held by ioctl may be mapped
 * @packets_read: packets handed over whole (read to the end, or released
 *	by ioctl after a consuming take)
 * @bytes_read: packet bytes handed over
 * @pages_spliced: pages given to pipes without a copy
 * @pages_recycled: of those, the ones whose replacement was a page that
 *	had come back from a pipe (the others' was allocated and zeroed)
 * @spliced: pages given to pipes, oldest first, each with a reference of
 *	ours: one that nothing else refers to any more is recycled
 * @spliced_cap: room in @spliced (0 until the first splice)
 * @spliced_head: index of the oldest in @spliced
 * @spliced_len: pages in @spliced
 * @status: the status page, once mapped; updated under the lock of
 *	@buf's wait queue, by the reader's calls and by @status_wait
 * @status_wait: on @buf's wait queue while @status exists: every wakeup
 *	of readers refreshes @status
 */
struct lrb_kbuf {
	struct lrb_kdev kdev;
	struct lrb_buf *buf;
	unsigned int cpu;
	struct timer_list switch_timer;
	struct timer_list read_timer;

	struct mutex lock;	/* the reader's state below */
	struct lrb_subbuf sb;
	bool holding;
	bool by_ioctl;
	unsigned long cursor;
	u32 watermark;
	u64 last_discarded;
	u64 last_ts_end;

	struct address_space *mapping;
	struct mutex map_lock;	/* @map_slot, @map_valid; faults */
	unsigned long map_slot;
	bool map_valid;

	atomic64_t packets_read;
	atomic64_t bytes_read;
	atomic64_t pages_spliced;
	atomic64_t pages_recycled;

	struct page **spliced;	/* under @lock */
	unsigned int spliced_cap;
	unsigned int spliced_head;
	unsigned int spliced_len;

	struct page *status;	/* under @lock; contents under the wq lock */
	struct wait_queue_entry status_wait;
};

/* Suffix of the channel that shows a region's previous run. */
#define LRB_PREVIOUS_SUFFIX ".previous"

struct lrb_kregion;

/**
 * struct lrb_krecovered - what the recovery of a previous run kept
 * @run_id: the previous run's identifier
 * @time_us: microseconds recovery took
 * @released: its region was released
 * @nr_bufs: buffers of the previous run
 * @stats: per buffer, what was kept and dropped
 */
struct lrb_krecovered {
	u64 run_id;
	u64 time_us;
	bool released;
	unsigned int nr_bufs;
	struct lrb_recovery_stats stats[];
};

/**
 * struct lrb_kchan - a channel published as files
 * @name: channel name
 * @cfg: copy of the client's configuration: readers may outlive the client
 * @chan: the channel
 * @kbufs: per possible CPU
 * @metadata_dev: /dev/lrb/<name>/metadata
 * @stats_dev: /dev/lrb/<name>/stats
 * @metadata: CTF metadata text
 * @metadata_len: its length
 * @ref: one for the client until lrb_kchan_destroy(), one per device
 * @node: in the list of channels
 * @cpuhp: CPU hotplug instance: switch timers, flush of a CPU going away
 * @cpuhp_dead: CPU hotplug instance: flush of a dead CPU
 * @switch_timer_us: period of the per-CPU switch timers, 0 if none
 * @read_timer_us: period of the per-CPU read timers, 0 if none
 * @clock_freq: frequency of the record clock in Hz
 * @finalized: destroyed, or its creation failed: nothing more will be
 *	written
 * @failed: its creation failed after its files were published: readers
 *	get ENODEV, not the end of the file
 * @region: a persistent channel's region, or the region a previous run
 *	(@recovered) came from
 * @recovered: a previous run's channel (<name>.previous): its recovery
 * @release_dev: /dev/lrb/<name>.previous/release
 */
struct lrb_kchan {
	char name[LRB_KCHAN_NAME_MAX + sizeof(LRB_PREVIOUS_SUFFIX)];
	struct lrb_config cfg;
	struct lrb_chan *chan;
	struct lrb_kbuf *kbufs;
	struct lrb_kdev metadata_dev;
	struct lrb_kdev stats_dev;
	char *metadata;
	size_t metadata_len;
	struct kref ref;
	struct list_head node;
	struct hlist_node cpuhp;
	struct hlist_node cpuhp_dead;
	unsigned int switch_timer_us;
	unsigned int read_timer_us;
	u64 clock_freq;
	bool finalized;
	bool failed;
	struct lrb_kregion *region;
	struct lrb_krecovered *recovered;
	struct lrb_kdev release_dev;
};

/* main.c */
int lrb_kdev_add(struct lrb_kchan *kc, struct lrb_kdev *kdev,
		 const struct file_operations *fops, const char *file);
void lrb_kdev_del(struct lrb_kdev *kdev);
extern int lrb_cpuhp_state;
extern int lrb_cpuhp_dead_state;

/* kchan.c */
void lrb_kchan_put(struct lrb_kchan *kc);
struct lrb_kchan *lrb_kchan_create_previous(const char *name,
					    const struct lrb_recovery *rec,
					    struct lrb_kregion *r,
					    u64 time_us);
void lrb_kchan_remove_previous(struct lrb_kchan *kc);
bool lrb_kchan_finalized(struct lrb_kchan *kc);
int lrb_kchan_online(unsigned int cpu, struct hlist_node *node);
int lrb_kchan_offline(unsigned int cpu, struct hlist_node *node);
int lrb_kchan_dead(unsigned int cpu, struct hlist_node *node);

/* cpu_file.c, chan_files.c */
extern const struct file_operations lrb_cpu_fops;
extern const struct file_operations lrb_metadata_fops;
extern const struct file_operations lrb_stats_fops;
extern const struct file_operations lrb_release_fops;
void lrb_kbuf_counters(struct lrb_kbuf *kb, struct lrb_buf_counters *c);

/* region.c */
int lrb_kregion_attach(struct lrb_kchan *kc, const struct lrb_kchan_attr *attr,
		       struct lrb_chan_attr *chan_attr);
void lrb_kregion_detach(struct lrb_kchan *kc);
void lrb_kregion_release(struct lrb_kchan *kc);
const char *lrb_kregion_name(const struct lrb_kregion *r);
void lrb_kregion_exit(void);

#endif /* _LRB_MODULE_H */
