// SPDX-License-Identifier: GPL-2.0
/*
 * lrb.ko channels with files: creation and destruction, the registry of
 * names, the per-CPU switch timers (started and stopped by CPU hotplug) and
 * the read timer.
 *
 * A channel lives as long as its client has not destroyed it or any of its
 * files is open (an open file holds its device, and each device holds the
 * channel): readers drain a destroyed channel at their own pace.
 */
#include <linux/cpuhotplug.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include <lrb/metadata.h>
#include "lrb_module.h"

static LIST_HEAD(lrb_kchans);
static DEFINE_MUTEX(lrb_kchans_lock);

static void lrb_kchan_release(struct kref *ref)
{
	struct lrb_kchan *kc = container_of(ref, struct lrb_kchan, ref);

	if (kc->chan)
		lrb_channel_destroy(kc->chan);
	/* no reader is left on its pages: the region may serve again */
	if (kc->region && !kc->recovered)
		lrb_kregion_detach(kc);
	kfree(kc->recovered);
	kfree(kc->metadata);
	kfree(kc->kbufs);
	kfree(kc);
}

void lrb_kchan_put(struct lrb_kchan *kc)
{
	kref_put(&kc->ref, lrb_kchan_release);
}

/* Once true, every packet is delivered: an empty buffer stays empty. */
bool lrb_kchan_finalized(struct lrb_kchan *kc)
{
	bool fin = READ_ONCE(kc->finalized);

	/* pairs with the smp_wmb() in lrb_kchan_destroy() */
	smp_rmb();
	return fin;
}

static void lrb_timer_arm(struct timer_list *t, unsigned int us)
{
	mod_timer(t, jiffies + usecs_to_jiffies(us));
}

static void lrb_switch_timer_fn(struct timer_list *t)
{
	struct lrb_kbuf *kb = from_timer(kb, t, switch_timer);

	/* a pinned timer runs where it was added unless its CPU went away */
	if (smp_processor_id() != kb->cpu)
		return;
	lrb_buf_flush_local(kb->buf);
	lrb_timer_arm(t, kb->kdev.kc->switch_timer_us);
}

/* Wakes the readers of a buffer whose writers leave that to a timer. */
static void lrb_read_timer_fn(struct timer_list *t)
{
	struct lrb_kbuf *kb = from_timer(kb, t, read_timer);

	if (wq_has_sleeper(&kb->buf->wait.wq) && lrb_buf_readable(kb->buf))
		wake_up_interruptible(&kb->buf->wait.wq);
	lrb_timer_arm(t, kb->kdev.kc->read_timer_us);
}

static void lrb_timer_start(struct timer_list *t, unsigned int us,
			    unsigned int cpu)
{
	if (!us)
		return;
	t->expires = jiffies + usecs_to_jiffies(us);
	add_timer_on(t, cpu);
}

/* CPU hotplug: runs on @cpu as it comes online (or the instance is added). */
int lrb_kchan_online(unsigned int cpu, struct hlist_node *node)
{
	struct lrb_kchan *kc = hlist_entry(node, struct lrb_kchan, cpuhp);
	struct lrb_kbuf *kb = &kc->kbufs[cpu];

	lrb_timer_start(&kb->switch_timer, kc->switch_timer_us, cpu);
	lrb_timer_start(&kb->read_timer, kc->read_timer_us, cpu);
	return 0;
}

/* Runs on @cpu as it goes offline: what it wrote becomes readable. */
int lrb_kchan_offline(unsigned int cpu, struct hlist_node *node)
{
	struct lrb_kchan *kc = hlist_entry(node, struct lrb_kchan, cpuhp);
	struct lrb_kbuf *kb = &kc->kbufs[cpu];

	timer_delete_sync(&kb->switch_timer);
	timer_delete_sync(&kb->read_timer);
	preempt_disable();
	lrb_buf_flush_local(kb->buf);
	preempt_enable();
	return 0;
}

/*
 * Runs on another CPU once @cpu is dead: interrupt handlers and per-CPU
 * threads may have written there after lrb_kchan_offline(). The hotplug
 * lock keeps every other flush away (__lrb_port_on_cpu() reads it). The
 * CPU's read timer is gone: wake its readers here.
 */
int lrb_kchan_dead(unsigned int cpu, struct hlist_node *node)
{
	struct lrb_kchan *kc = hlist_entry(node, struct lrb_kchan, cpuhp_dead);
	struct lrb_buf *buf = kc->kbufs[cpu].buf;

	lrb_buf_flush_local(buf);
	wake_up_interruptible(&buf->wait.wq);
	return 0;
}

/*
 * Nothing more will be written to @kc: readers drain what is left, then
 * see the end of the file, or (@failed: the channel never went live)
 * ENODEV.
 */
static void lrb_kchan_finalize(struct lrb_kchan *kc, bool failed)
{
	unsigned int cpu;

	/* readers may outlive the client's module: no more calls into it */
	memset(&kc->cfg.cb, 0, sizeof(kc->cfg.cb));
	kc->failed = failed;
	/* every packet is delivered before readers see the end */
	smp_wmb();
	WRITE_ONCE(kc->finalized, true);
	for_each_possible_cpu(cpu)
		wake_up_interruptible_all(&kc->kbufs[cpu].buf->wait.wq);
}

#ifdef LRB_FAILPOINTS
/*
 * Test-only, in lrb.ko as tests/vm builds it (LRB_FAILPOINTS=y): the next
 * creation of the channel named in parameter fail_publish fails with
 * -ENOMEM after its files are published, as if a later step had failed,
 * once a reader waits on its first CPU's file (or after 10 s): the case
 * of a reader that opened a file of a channel whose creation then failed.
 */
static char lrb_fail_publish[LRB_KCHAN_NAME_MAX + 2];
module_param_string(fail_publish, lrb_fail_publish, sizeof(lrb_fail_publish),
		    0600);
MODULE_PARM_DESC(fail_publish,
		 "test only: fail the next creation of this channel after publishing its files");

static int lrb_kchan_failpoint(struct lrb_kchan *kc)
{
	struct lrb_buf *buf = kc->kbufs[cpumask_first(cpu_possible_mask)].buf;
	bool armed;
	int i;

	kernel_param_lock(THIS_MODULE);
	armed = sysfs_streq(lrb_fail_publish, kc->name);
	if (armed)
		lrb_fail_publish[0] = '\0';
	kernel_param_unlock(THIS_MODULE);
	if (!armed)
		return 0;
	for (i = 0; i < 500 && !wq_has_sleeper(&buf->wait.wq); i++)
		msleep(20);
	pr_info("lrb: channel %s: failing its creation after publishing its files (fail_publish), %s\n",
		kc->name, i < 500 ? "a reader waits" : "no reader came");
	return -ENOMEM;
}
#else
static inline int lrb_kchan_failpoint(struct lrb_kchan *kc)
{
	return 0;
}
#endif

static int lrb_kchan_check(const struct lrb_config *cfg,
			   const struct lrb_kchan_attr *attr)
{
	bool by_timer = cfg->wakeup == LRB_WAKEUP_BY_TIMER;
	const char *c;

	if (!attr->name || !attr->name[0] ||
	    strlen(attr->name) > LRB_KCHAN_NAME_MAX) {
		pr_err("lrb: channel name must have 1 to %d characters\n",
		       LRB_KCHAN_NAME_MAX);
		return -EINVAL;
	}
	for (c = attr->name; *c; c++) {
		if (!isalnum(*c) && *c != '_' && *c != '-') {
			pr_err("lrb: channel name \"%s\": use only letters, digits, '_' and '-'\n",
			       attr->name);
			return -EINVAL;
		}
	}
	if (cfg->alloc != LRB_ALLOC_PER_CPU) {
		pr_err("lrb: channel %s: only per-CPU channels have files\n",
		       attr->name);
		return -EINVAL;
	}
	if (cfg->persistent != !!attr->region) {
		pr_err("lrb: channel %s: a persistent configuration needs a region (lrb_kchan_attr.region), and a region a persistent configuration\n",
		       attr->name);
		return -EINVAL;
	}
	if (by_timer != !!attr->read_timer_us) {
		pr_err("lrb: channel %s: read_timer_us must be set exactly when readers are woken by timer\n",
		       attr->name);
		return -EINVAL;
	}
	return 0;
}

/* The clock's zero in wall-clock time, for the CTF metadata. */
static void lrb_clock_offset(const struct lrb_config *cfg, u64 freq,
			     struct lrb_metadata_attr *meta)
{
	u64 real = ktime_get_real_ns();
	u64 now = cfg->cb.clock_read();
	u64 real_s = div_u64(real, NSEC_PER_SEC);
	u64 real_cycles = mul_u64_u64_div_u64(real - real_s * NSEC_PER_SEC,
					      freq, NSEC_PER_SEC);
	u64 now_s = div64_u64(now, freq);
	u64 now_cycles = now - now_s * freq;

	meta->clock_freq = freq;
	meta->clock_offset_s = real_s - now_s;
	if (real_cycles >= now_cycles) {
		meta->clock_offset = real_cycles - now_cycles;
	} else {
		meta->clock_offset = real_cycles + freq - now_cycles;
		meta->clock_offset_s--;
	}
}

static int lrb_kchan_metadata(struct lrb_kchan *kc,
			      const struct lrb_kchan_attr *attr)
{
	struct lrb_metadata_attr meta = {
		.events = attr->events,
		.nr_events = attr->nr_events,
	};
	/* before the channel: a region keeps the text from its creation on */
	const struct lrb_chan proto = {
		.cfg = &kc->cfg,
		.stream_id = attr->chan.stream_id,
	};
	int len;

	lrb_clock_offset(&kc->cfg, kc->clock_freq, &meta);
	len = lrb_metadata_format(&proto, &meta, NULL, 0);
	if (len < 0) {
		pr_err("lrb: channel %s: its events are inconsistent (an id or name used twice, a sequence without an earlier unsigned length field, or a bad enumeration label): fix their LRB_EVENT() definitions\n",
		       kc->name);
		return len;
	}
	kc->metadata = kmalloc(len + 1, GFP_KERNEL);
	if (!kc->metadata)
		return -ENOMEM;
	kc->metadata_len = lrb_metadata_format(&proto, &meta, kc->metadata,
					       len + 1);
	return 0;
}

static void lrb_kchan_init_bufs(struct lrb_kchan *kc)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct lrb_kbuf *kb = &kc->kbufs[cpu];

		kb->buf = lrb_channel_nth_buf(kc->chan, cpu);
		kb->cpu = cpu;
		mutex_init(&kb->lock);
		mutex_init(&kb->map_lock);
		timer_setup(&kb->switch_timer, lrb_switch_timer_fn,
			    TIMER_PINNED);
		timer_setup(&kb->read_timer, lrb_read_timer_fn, TIMER_PINNED);
	}
}

/* A channel of @cfg with its buffers; kc->chan stays NULL on failure. */
static struct lrb_kchan *lrb_kchan_new(const char *name,
				       const struct lrb_config *cfg)
{
	struct lrb_kchan *kc;

	kc = kzalloc(sizeof(*kc), GFP_KERNEL);
	if (!kc)
		return NULL;
	strscpy(kc->name, name, sizeof(kc->name));
	kc->cfg = *cfg;
	kref_init(&kc->ref);
	kc->kbufs = kcalloc(nr_cpu_ids, sizeof(*kc->kbufs), GFP_KERNEL);
	if (!kc->kbufs) {
		kfree(kc);
		return NULL;
	}
	return kc;
}

static struct lrb_kchan *lrb_kchan_alloc(const struct lrb_config *cfg,
					 const struct lrb_kchan_attr *attr)
{
	struct lrb_chan_attr chan_attr = attr->chan;
	struct lrb_kchan *kc;
	int ret;

	kc = lrb_kchan_new(attr->name, cfg);
	if (!kc)
		return ERR_PTR(-ENOMEM);
	kc->switch_timer_us = attr->switch_timer_us;
	kc->read_timer_us = attr->read_timer_us;
	kc->clock_freq = attr->clock_freq ?: NSEC_PER_SEC;
	chan_attr.nr_cpus = nr_cpu_ids;
	ret = lrb_kchan_metadata(kc, attr);
	if (!ret && attr->region)
		ret = lrb_kregion_attach(kc, attr, &chan_attr);
	if (!ret)
		ret = lrb_channel_create(&kc->cfg, &chan_attr, &kc->chan);
	if (ret) {
		lrb_kchan_put(kc);
		return ERR_PTR(ret);
	}
	lrb_kchan_init_bufs(kc);
	return kc;
}

static void lrb_kchan_del_files(struct lrb_kchan *kc, unsigned int nr_cpus)
{
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpus; cpu++)
		if (cpu_possible(cpu))
			lrb_kdev_del(&kc->kbufs[cpu].kdev);
	lrb_kdev_del(&kc->stats_dev);
	lrb_kdev_del(&kc->metadata_dev);
	if (kc->recovered)
		lrb_kdev_del(&kc->release_dev);
}

static int lrb_kchan_add_files(struct lrb_kchan *kc)
{
	unsigned int cpu;
	char file[16];
	int ret;

	ret = lrb_kdev_add(kc, &kc->metadata_dev, &lrb_metadata_fops,
			   "metadata");
	if (ret)
		return ret;
	ret = lrb_kdev_add(kc, &kc->stats_dev, &lrb_stats_fops, "stats");
	if (ret) {
		lrb_kdev_del(&kc->metadata_dev);
		return ret;
	}
	if (kc->recovered) {
		ret = lrb_kdev_add(kc, &kc->release_dev, &lrb_release_fops,
				   "release");
		if (ret) {
			lrb_kdev_del(&kc->stats_dev);
			lrb_kdev_del(&kc->metadata_dev);
			return ret;
		}
	}
	for_each_possible_cpu(cpu) {
		snprintf(file, sizeof(file), "cpu%u", cpu);
		ret = lrb_kdev_add(kc, &kc->kbufs[cpu].kdev, &lrb_cpu_fops,
				   file);
		if (ret) {
			lrb_kchan_del_files(kc, cpu);
			return ret;
		}
	}
	return 0;
}

static int lrb_kchan_register(struct lrb_kchan *kc)
{
	struct lrb_kchan *other;
	int ret = 0;

	mutex_lock(&lrb_kchans_lock);
	list_for_each_entry(other, &lrb_kchans, node) {
		if (!strcmp(other->name, kc->name)) {
			pr_err("lrb: channel %s exists already\n", kc->name);
			ret = -EEXIST;
			goto out;
		}
	}
	ret = lrb_kchan_add_files(kc);
	if (!ret)
		list_add(&kc->node, &lrb_kchans);
out:
	mutex_unlock(&lrb_kchans_lock);
	return ret;
}

struct lrb_kchan *lrb_kchan_create(const struct lrb_config *cfg,
				   const struct lrb_kchan_attr *attr)
{
	struct lrb_kchan *kc;
	int ret;

	ret = lrb_kchan_check(cfg, attr);
	if (ret)
		return ERR_PTR(ret);
	kc = lrb_kchan_alloc(cfg, attr);
	if (IS_ERR(kc))
		return kc;
	ret = lrb_kchan_register(kc);
	if (ret)
		goto fail;
	ret = lrb_kchan_failpoint(kc);
	if (ret)
		goto unregister;
	ret = cpuhp_state_add_instance_nocalls(lrb_cpuhp_dead_state,
					       &kc->cpuhp_dead);
	if (ret)
		goto unregister;
	ret = cpuhp_state_add_instance(lrb_cpuhp_state, &kc->cpuhp);
	if (ret) {
		cpuhp_state_remove_instance_nocalls(lrb_cpuhp_dead_state,
						    &kc->cpuhp_dead);
		goto unregister;
	}
	return kc;

unregister:
	mutex_lock(&lrb_kchans_lock);
	list_del(&kc->node);
	lrb_kchan_del_files(kc, nr_cpu_ids);
	mutex_unlock(&lrb_kchans_lock);
fail:
	/* a reader may have opened a file already: it must not wait forever */
	lrb_kchan_finalize(kc, true);
	lrb_kchan_put(kc);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(lrb_kchan_create);

struct lrb_chan *lrb_kchan_chan(struct lrb_kchan *kc)
{
	return kc->chan;
}
EXPORT_SYMBOL_GPL(lrb_kchan_chan);

void lrb_kchan_destroy(struct lrb_kchan *kc)
{
	might_sleep();
	cpuhp_state_remove_instance(lrb_cpuhp_state, &kc->cpuhp);
	cpuhp_state_remove_instance_nocalls(lrb_cpuhp_dead_state,
					    &kc->cpuhp_dead);
	/* writers still between reserve and commit */
	synchronize_rcu();
	lrb_channel_flush(kc->chan);
	lrb_kchan_finalize(kc, false);

	mutex_lock(&lrb_kchans_lock);
	list_del(&kc->node);
	lrb_kchan_del_files(kc, nr_cpu_ids);
	mutex_unlock(&lrb_kchans_lock);
	lrb_kchan_put(kc);
}
EXPORT_SYMBOL_GPL(lrb_kchan_destroy);

/**
 * lrb_kchan_create_previous() - publish a recovered run as a channel
 * @name: the channel's name (<channel>.previous)
 * @rec: the recovery, which the caller frees afterwards
 * @r: the region it came from
 * @time_us: how long recovery took
 *
 * A discard channel with the previous run's geometry, whose buffers hold
 * the packets kept (lrb_recovery_load()): readers get them with read,
 * splice and mmap as from any channel, then the end of the file. No
 * client writes it, no timer or CPU hotplug callback touches it; lrb.ko
 * owns it until lrb_kchan_remove_previous().
 *
 * Return: the channel, or an ERR_PTR(): -ENOMEM, -EEXIST.
 */
struct lrb_kchan *lrb_kchan_create_previous(const char *name,
					    const struct lrb_recovery *rec,
					    struct lrb_kregion *r,
					    u64 time_us)
{
	const struct lrb_config cfg = {
		.mode = LRB_MODE_DISCARD,
		.alloc = LRB_ALLOC_PER_CPU,
		.wakeup = LRB_WAKEUP_BY_WRITER,
		.header = rec->dec.header,
		.tsc_bits = rec->dec.tsc_bits,
		.cb.clock_read = lrb_clock_default,
	};
	struct lrb_chan_attr chan_attr = {
		.subbuf_size = rec->header.subbuf_size,
		.num_subbuf = rec->header.num_subbuf,
		.nr_cpus = nr_cpu_ids,
		.stream_id = rec->header.stream_id,
	};
	struct lrb_krecovered *kr;
	struct lrb_kchan *kc;
	unsigned int b;
	int ret = -ENOMEM;

	kc = lrb_kchan_new(name, &cfg);
	if (!kc)
		return ERR_PTR(-ENOMEM);
	kc->clock_freq = NSEC_PER_SEC;
	kr = kzalloc(struct_size(kr, stats, rec->nr_bufs), GFP_KERNEL);
	kc->recovered = kr;
	kc->metadata = kmemdup_nul(rec->metadata, rec->metadata_size,
				   GFP_KERNEL);
	if (!kr || !kc->metadata)
		goto fail;
	kc->region = r;
	kc->metadata_len = rec->metadata_size;
	kr->run_id = rec->header.run_id;
	kr->time_us = time_us;
	kr->nr_bufs = rec->nr_bufs;
	for (b = 0; b < rec->nr_bufs; b++)
		kr->stats[b] = rec->bufs[b].stats;
	ret = lrb_channel_create(&kc->cfg, &chan_attr, &kc->chan);
	if (ret)
		goto fail;
	lrb_kchan_init_bufs(kc);
	ret = lrb_recovery_load(rec, kc->chan);
	if (ret)
		goto fail;
	lrb_kchan_finalize(kc, false);
	ret = lrb_kchan_register(kc);
	if (ret)
		goto fail;
	return kc;

fail:
	lrb_kchan_put(kc);
	return ERR_PTR(ret);
}

/**
 * lrb_kchan_remove_previous() - remove a channel of a previous run
 * @kc: from lrb_kchan_create_previous()
 *
 * Its files go away; those still open drain it and free it at the last
 * close.
 */
void lrb_kchan_remove_previous(struct lrb_kchan *kc)
{
	mutex_lock(&lrb_kchans_lock);
	list_del(&kc->node);
	lrb_kchan_del_files(kc, nr_cpu_ids);
	mutex_unlock(&lrb_kchans_lock);
	lrb_kchan_put(kc);
}
