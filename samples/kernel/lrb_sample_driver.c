// SPDX-License-Identifier: GPL-2.0
/*
 * lrb_sample_driver.ko: logs I/O completions the way a block driver would,
 * into lrb channels, from both places a driver completes requests: its
 * interrupt handler (a pinned hardirq hrtimer per CPU) and its completion
 * thread (a kthread per CPU).
 *
 * mode=discard logs to channel <name>, mode=overwrite to a flight recorder
 * <name>-fr, mode=both to the two at once, each completion to both. The
 * writers of each CPU follow it through CPU hotplug: they are smpboot
 * threads, parked while their CPU is offline, and each thread starts and
 * cancels its CPU's timer. Every attempt takes the next sequence number of
 * its (CPU, context) stream and every failed reserve is counted, so a
 * reader can account for every completion: debugfs file "written".
 *
 * region=NAME makes the flight recorder persistent: laid out in the memory
 * reserved at boot with reserve_mem=SIZE:ALIGN:NAME, its last records
 * survive a crash and come back as channel <name>-fr.previous
 * (Documentation/persistent.rst).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smpboot.h>
#include <linux/uaccess.h>

#include <lrb/kchan.h>
#include "lrb_sample.h"

static char *chan_name = "driver";
module_param_named(name, chan_name, charp, 0444);
MODULE_PARM_DESC(name, "channel name prefix: <name> (discard), <name>-fr (flight recorder)");

static char *mode = "discard";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "\"discard\", \"overwrite\" or \"both\"");

static unsigned int rate = 1000;
module_param(rate, uint, 0444);
MODULE_PARM_DESC(rate, "events per second per CPU and context (0: as fast as possible)");

static unsigned int rec_size = 64;
module_param_named(size, rec_size, uint, 0444);
MODULE_PARM_DESC(size, "payload bytes per event, 34..65535");

static unsigned long subbuf_size = 65536;
module_param(subbuf_size, ulong, 0444);
MODULE_PARM_DESC(subbuf_size, "bytes per sub-buffer (power of two)");

static unsigned long num_subbuf = 16;
module_param(num_subbuf, ulong, 0444);
MODULE_PARM_DESC(num_subbuf, "sub-buffers per CPU (power of two, >= 2)");

static unsigned int switch_timer_us = 100000;
module_param(switch_timer_us, uint, 0444);
MODULE_PARM_DESC(switch_timer_us, "close partly filled packets this often (0: never)");

static bool task_writers = true;
module_param_named(task, task_writers, bool, 0444);
MODULE_PARM_DESC(task, "log from each CPU's kthread");

static bool irq_writers = true;
module_param_named(irq, irq_writers, bool, 0444);
MODULE_PARM_DESC(irq, "log from each CPU's hardirq timer");

static unsigned long max_events;
module_param(max_events, ulong, 0444);
MODULE_PARM_DESC(max_events, "attempts per CPU and context, then stop (0: no limit)");

static bool autostart = true;
module_param(autostart, bool, 0444);
MODULE_PARM_DESC(autostart, "start logging at load (else: write start to debugfs ctl)");

static char *region;
module_param(region, charp, 0444);
MODULE_PARM_DESC(region, "reserve_mem name: the flight recorder <name>-fr is persistent there");

#define LRB_SD_RATE_MAX 1000000
/* Timer period at rates of 1000/s and more; the kthread's wakeup slack. */
#define LRB_SD_TICK_NS NSEC_PER_MSEC
/* Events per timer tick at most: a hardirq delays all else on its CPU. */
#define LRB_SD_IRQ_BATCH 256
/* Events per timer tick with rate=0. */
#define LRB_SD_IRQ_FLAT 64
/* Events between two cond_resched() of a kthread. */
#define LRB_SD_TASK_BATCH 256
#define LRB_SD_FR_SUFFIX "-fr"

enum {
	LRB_SD_DISCARD,
	LRB_SD_FLIGHT,
	LRB_SD_NR_CHANS,
};

/* One constant config per channel: each gets its own fast path. */
#define LRB_SD_CFG(m) {						\
	.mode = (m),						\
	.alloc = LRB_ALLOC_PER_CPU,				\
	.wakeup = LRB_WAKEUP_BY_WRITER,				\
	.header = LRB_HEADER_COMPACT,				\
	.tsc_bits = 27,						\
	.cb.clock_read = lrb_clock_default,			\
}

static const struct lrb_config lrb_sd_discard_cfg = LRB_SD_CFG(LRB_MODE_DISCARD);
static const struct lrb_config lrb_sd_flight_cfg = LRB_SD_CFG(LRB_MODE_OVERWRITE);
static const struct lrb_config lrb_sd_persist_cfg = {
	.mode = LRB_MODE_OVERWRITE,
	.alloc = LRB_ALLOC_PER_CPU,
	.wakeup = LRB_WAKEUP_BY_WRITER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.cb.clock_read = lrb_clock_default,
	.persistent = true,
};

/* The flight recorder is laid out in the region. */
static bool lrb_sd_persistent;

/**
 * struct lrb_sd_stream - the writer of one (CPU, context)
 * @seq: next sequence number: also the attempts so far
 * @lost: failed reserves, per channel
 * @pace_start: when pacing (re)started, in ktime_get_ns() time
 * @paced: events written since @pace_start
 * @rec: scratch where the record's data is built before it is reserved
 *
 * Only its own context on its own CPU writes a stream, so plain stores
 * suffice; readers of the counters use READ_ONCE().
 */
struct lrb_sd_stream {
	u64 seq;
	u64 lost[LRB_SD_NR_CHANS];
	u64 pace_start;
	u64 paced;
	u8 *rec;
};

/**
 * struct lrb_sd_cpu - a CPU's writers
 * @st: the task and irq streams
 * @timer: the irq writer, pinned to the CPU
 */
struct lrb_sd_cpu {
	struct lrb_sd_stream st[LRB_SAMPLE_NR_CTX];
	struct hrtimer timer;
};

static DEFINE_PER_CPU(struct lrb_sd_cpu, lrb_sd_cpus);
static DEFINE_PER_CPU(struct task_struct *, lrb_sd_tasks);

static const struct lrb_event_desc *const lrb_sd_events[] = {
	&lrb_event_io_complete,
};

static struct lrb_kchan *lrb_sd_kc[LRB_SD_NR_CHANS];
static struct lrb_chan *lrb_sd_chan[LRB_SD_NR_CHANS];
static char lrb_sd_names[LRB_SD_NR_CHANS][LRB_KCHAN_NAME_MAX + 1];
static u8 *lrb_sd_scratch;
static u16 lrb_sd_data_len;
static ktime_t lrb_sd_period;
static struct dentry *lrb_sd_dir;

/* Serialises start, stop and flush. */
static DEFINE_MUTEX(lrb_sd_lock);
static bool lrb_sd_running;

static __always_inline void lrb_sd_emit(const struct lrb_config *cfg,
					struct lrb_chan *chan,
					const struct lrb_sample_io *io,
					const u8 *data, u64 *lost)
{
	if (unlikely(lrb_write_io_complete(cfg, chan, io->seq, io->cpu,
					   io->ctx, io->rq_op, io->nr_sectors,
					   io->dev, io->sector, io->latency_ns,
					   io->data_len, data)))
		WRITE_ONCE(*lost, *lost + 1);
}

/* Log one completion in context @ctx of this CPU, to every channel. */
static void lrb_sd_log(u8 ctx)
{
	unsigned int cpu = get_cpu();
	struct lrb_sd_stream *s = &this_cpu_ptr(&lrb_sd_cpus)->st[ctx];
	struct lrb_sample_io io;
	struct lrb_chan *chan;
	u64 seq = s->seq;
	u32 i;

	WRITE_ONCE(s->seq, seq + 1);
	/* the record is ready before reserving, as a driver's would be */
	lrb_sample_io_fill(&io, seq, cpu, ctx, lrb_sd_data_len);
	for (i = 0; i < lrb_sd_data_len; i++)
		s->rec[i] = lrb_sample_io_byte(seq, i);

	chan = lrb_sd_chan[LRB_SD_DISCARD];
	if (chan)
		lrb_sd_emit(&lrb_sd_discard_cfg, chan, &io, s->rec,
			    &s->lost[LRB_SD_DISCARD]);
	chan = lrb_sd_chan[LRB_SD_FLIGHT];
	if (chan && lrb_sd_persistent)
		lrb_sd_emit(&lrb_sd_persist_cfg, chan, &io, s->rec,
			    &s->lost[LRB_SD_FLIGHT]);
	else if (chan)
		lrb_sd_emit(&lrb_sd_flight_cfg, chan, &io, s->rec,
			    &s->lost[LRB_SD_FLIGHT]);
	put_cpu();
}

static bool lrb_sd_done(struct lrb_sd_stream *s)
{
	return max_events && READ_ONCE(s->seq) >= max_events;
}

/* Events @s owes now to keep its rate, at most @max. */
static u32 lrb_sd_due(struct lrb_sd_stream *s, u32 max)
{
	u64 n = max, target;

	if (rate) {
		target = mul_u64_u32_div(ktime_get_ns() - s->pace_start, rate,
					 NSEC_PER_SEC);
		n = target > s->paced ? min_t(u64, target - s->paced, max) : 0;
	}
	if (max_events)
		n = min_t(u64, n, max_events - min_t(u64, s->seq, max_events));
	return n;
}

static void lrb_sd_log_batch(struct lrb_sd_stream *s, u8 ctx, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		lrb_sd_log(ctx);
	s->paced += n;
}

static enum hrtimer_restart lrb_sd_tick(struct hrtimer *timer)
{
	struct lrb_sd_stream *s =
		&this_cpu_ptr(&lrb_sd_cpus)->st[LRB_SAMPLE_CTX_IRQ];

	lrb_sd_log_batch(s, LRB_SAMPLE_CTX_IRQ,
			 lrb_sd_due(s, rate ? LRB_SD_IRQ_BATCH : LRB_SD_IRQ_FLAT));
	if (lrb_sd_done(s))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, lrb_sd_period);
	return HRTIMER_RESTART;
}

/* Sleep until @s owes an event; kthread_park() and _stop() wake us. */
static void lrb_sd_task_sleep(struct lrb_sd_stream *s)
{
	ktime_t next = ns_to_ktime(s->pace_start +
				   mul_u64_u32_div(s->paced + 1, NSEC_PER_SEC,
						   rate));

	set_current_state(TASK_INTERRUPTIBLE);
	if (!kthread_should_park() && !kthread_should_stop())
		schedule_hrtimeout_range(&next, LRB_SD_TICK_NS,
					 HRTIMER_MODE_ABS);
	__set_current_state(TASK_RUNNING);
}

static int lrb_sd_task_should_run(unsigned int cpu)
{
	struct lrb_sd_cpu *pc = per_cpu_ptr(&lrb_sd_cpus, cpu);

	return task_writers && !lrb_sd_done(&pc->st[LRB_SAMPLE_CTX_TASK]);
}

static void lrb_sd_task_fn(unsigned int cpu)
{
	struct lrb_sd_stream *s =
		&per_cpu_ptr(&lrb_sd_cpus, cpu)->st[LRB_SAMPLE_CTX_TASK];
	u32 n = lrb_sd_due(s, LRB_SD_TASK_BATCH);

	lrb_sd_log_batch(s, LRB_SAMPLE_CTX_TASK, n);
	if (rate && n < LRB_SD_TASK_BATCH)
		lrb_sd_task_sleep(s);
	else
		cond_resched();
}

/*
 * Runs in @cpu's thread, on @cpu, when the writers start and whenever
 * @cpu comes back online: pacing starts afresh, so an offline spell does
 * not turn into a burst, and the pinned timer is started here, where it
 * must run.
 */
static void lrb_sd_cpu_up(unsigned int cpu)
{
	struct lrb_sd_cpu *pc = per_cpu_ptr(&lrb_sd_cpus, cpu);
	u64 now = ktime_get_ns();
	unsigned int ctx;

	for (ctx = 0; ctx < LRB_SAMPLE_NR_CTX; ctx++) {
		pc->st[ctx].pace_start = now;
		pc->st[ctx].paced = 0;
	}
	if (irq_writers && !lrb_sd_done(&pc->st[LRB_SAMPLE_CTX_IRQ]))
		hrtimer_start(&pc->timer, lrb_sd_period,
			      HRTIMER_MODE_REL_PINNED_HARD);
}

/* Before @cpu goes offline: no irq writer may move to another CPU. */
static void lrb_sd_cpu_down(unsigned int cpu)
{
	hrtimer_cancel(&per_cpu_ptr(&lrb_sd_cpus, cpu)->timer);
}

static void lrb_sd_cpu_cleanup(unsigned int cpu, bool online)
{
	lrb_sd_cpu_down(cpu);
}

static struct smp_hotplug_thread lrb_sd_threads = {
	.store = &lrb_sd_tasks,
	.thread_should_run = lrb_sd_task_should_run,
	.thread_fn = lrb_sd_task_fn,
	.setup = lrb_sd_cpu_up,
	.unpark = lrb_sd_cpu_up,
	.park = lrb_sd_cpu_down,
	.cleanup = lrb_sd_cpu_cleanup,
	.thread_comm = "lrb_sample/%u",
};

static int lrb_sd_start(void)
{
	int ret;

	if (lrb_sd_running)
		return 0;
	ret = smpboot_register_percpu_thread(&lrb_sd_threads);
	if (ret) {
		pr_err("cannot start the per-CPU writer threads: %pe; free some memory and write start to ctl\n",
		       ERR_PTR(ret));
		return ret;
	}
	lrb_sd_running = true;
	return 0;
}

/*
 * Stop every writer: the threads exit and their cleanup cancels the
 * timers (those of offline CPUs were cancelled at park), so no write is
 * in progress on return and the counters are final.
 */
static void lrb_sd_stop(void)
{
	if (!lrb_sd_running)
		return;
	smpboot_unregister_percpu_thread(&lrb_sd_threads);
	lrb_sd_running = false;
}

static ssize_t lrb_sd_ctl_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char cmd[16];
	unsigned int c;
	int ret = 0;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';

	mutex_lock(&lrb_sd_lock);
	if (sysfs_streq(cmd, "start")) {
		ret = lrb_sd_start();
	} else if (sysfs_streq(cmd, "stop")) {
		lrb_sd_stop();
	} else if (sysfs_streq(cmd, "flush")) {
		for (c = 0; c < LRB_SD_NR_CHANS; c++)
			if (lrb_sd_chan[c])
				lrb_channel_flush(lrb_sd_chan[c]);
	} else {
		pr_err("unknown ctl command \"%s\": write start, stop or flush\n",
		       strim(cmd));
		ret = -EINVAL;
	}
	mutex_unlock(&lrb_sd_lock);
	return ret ? ret : count;
}

static const struct file_operations lrb_sd_ctl_fops = {
	.owner = THIS_MODULE,
	.write = lrb_sd_ctl_write,
	.llseek = noop_llseek,
};

static int lrb_sd_written_show(struct seq_file *m, void *unused)
{
	u64 task, irq, lost, all_attempts, all_lost;
	struct lrb_sd_cpu *pc;
	unsigned int c, cpu;

	seq_printf(m, "running=%d\n", READ_ONCE(lrb_sd_running));
	for (c = 0; c < LRB_SD_NR_CHANS; c++) {
		if (!lrb_sd_kc[c])
			continue;
		seq_printf(m, "channel %s mode=%s%s\n", lrb_sd_names[c],
			   c == LRB_SD_DISCARD ? "discard" : "overwrite",
			   c == LRB_SD_FLIGHT && lrb_sd_persistent ?
			   " persistent" : "");
		all_attempts = 0;
		all_lost = 0;
		for_each_possible_cpu(cpu) {
			pc = per_cpu_ptr(&lrb_sd_cpus, cpu);
			task = READ_ONCE(pc->st[LRB_SAMPLE_CTX_TASK].seq);
			irq = READ_ONCE(pc->st[LRB_SAMPLE_CTX_IRQ].seq);
			lost = READ_ONCE(pc->st[LRB_SAMPLE_CTX_TASK].lost[c]) +
			       READ_ONCE(pc->st[LRB_SAMPLE_CTX_IRQ].lost[c]);
			seq_printf(m, "cpu%u attempts=%llu lost=%llu task=%llu irq=%llu\n",
				   cpu, task + irq, lost, task, irq);
			all_attempts += task + irq;
			all_lost += lost;
		}
		seq_printf(m, "total attempts=%llu lost=%llu\n", all_attempts,
			   all_lost);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lrb_sd_written);

static bool lrb_sd_name_ok(const char *s)
{
	size_t len = strlen(s);

	if (!len || len > LRB_KCHAN_NAME_MAX - strlen(LRB_SD_FR_SUFFIX))
		return false;
	for (; *s; s++)
		if (!isalnum(*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

static int lrb_sd_check_params(void)
{
	if (strcmp(mode, "discard") && strcmp(mode, "overwrite") &&
	    strcmp(mode, "both")) {
		pr_err("mode=%s: use discard, overwrite or both\n", mode);
		return -EINVAL;
	}
	if (!lrb_sd_name_ok(chan_name)) {
		pr_err("name=%s: use 1 to %zu letters, digits, '_' or '-'\n",
		       chan_name, LRB_KCHAN_NAME_MAX - strlen(LRB_SD_FR_SUFFIX));
		return -EINVAL;
	}
	if (!is_power_of_2(subbuf_size) || subbuf_size < LRB_MIN_SUBBUF_SIZE ||
	    subbuf_size > LRB_MAX_SUBBUF_SIZE) {
		pr_err("subbuf_size=%lu: use a power of two from %lu to %lu\n",
		       subbuf_size, LRB_MIN_SUBBUF_SIZE, LRB_MAX_SUBBUF_SIZE);
		return -EINVAL;
	}
	if (!is_power_of_2(num_subbuf) || num_subbuf < 2 ||
	    num_subbuf > LRB_MAX_NUM_SUBBUF) {
		pr_err("num_subbuf=%lu: use a power of two from 2 to %lu\n",
		       num_subbuf, LRB_MAX_NUM_SUBBUF);
		return -EINVAL;
	}
	if (rec_size < LRB_SAMPLE_IO_MIN || rec_size > 65535) {
		pr_err("size=%u: use %u (the fixed fields) to 65535\n",
		       rec_size, LRB_SAMPLE_IO_MIN);
		return -EINVAL;
	}
	if (rec_size + LRB_EXTENDED_HEADER_SIZE + LRB_PACKET_HEADER_SIZE >
	    subbuf_size) {
		pr_err("size=%u does not fit in a sub-buffer of %lu bytes: raise subbuf_size or lower size\n",
		       rec_size, subbuf_size);
		return -EINVAL;
	}
	if (rate > LRB_SD_RATE_MAX) {
		pr_err("rate=%u: use at most %u, or 0 for as fast as possible\n",
		       rate, LRB_SD_RATE_MAX);
		return -EINVAL;
	}
	if (region && !strcmp(mode, "discard")) {
		pr_err("region=%s needs the flight recorder: load with mode=overwrite or mode=both\n",
		       region);
		return -EINVAL;
	}
	if (!task_writers && !irq_writers) {
		pr_err("task=0 and irq=0: enable at least one writer context\n");
		return -EINVAL;
	}
	return 0;
}

/* Give each (CPU, context) its own record scratch, cache lines apart. */
static int lrb_sd_alloc(void)
{
	size_t stride = ALIGN(rec_size, SMP_CACHE_BYTES);
	struct lrb_sd_cpu *pc;
	unsigned int cpu, ctx;

	lrb_sd_scratch = kvcalloc(nr_cpu_ids * LRB_SAMPLE_NR_CTX, stride,
				  GFP_KERNEL);
	if (!lrb_sd_scratch)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(&lrb_sd_cpus, cpu);
		for (ctx = 0; ctx < LRB_SAMPLE_NR_CTX; ctx++)
			pc->st[ctx].rec = lrb_sd_scratch +
					  (cpu * LRB_SAMPLE_NR_CTX + ctx) * stride;
		hrtimer_init(&pc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		pc->timer.function = lrb_sd_tick;
	}
	return 0;
}

/*
 * The flight recorder in the region; if the region still holds a previous
 * run that was not released, a flight recorder that is not persistent.
 */
static struct lrb_kchan *lrb_sd_create_persistent(struct lrb_kchan_attr *attr)
{
	struct lrb_kchan *kc;

	attr->region = region;
	kc = lrb_kchan_create(&lrb_sd_persist_cfg, attr);
	if (!IS_ERR(kc)) {
		lrb_sd_persistent = true;
		return kc;
	}
	if (PTR_ERR(kc) != -EBUSY)
		return kc;
	pr_warn("channel %s is NOT persistent: region %s is busy (the lrb message above says why and what to do); then load this module again\n",
		attr->name, region);
	attr->region = NULL;
	return lrb_kchan_create(&lrb_sd_flight_cfg, attr);
}

static int lrb_sd_create(unsigned int c)
{
	struct lrb_kchan_attr attr = {
		.name = lrb_sd_names[c],
		.chan.subbuf_size = subbuf_size,
		.chan.num_subbuf = num_subbuf,
		.switch_timer_us = switch_timer_us,
		.events = lrb_sd_events,
		.nr_events = ARRAY_SIZE(lrb_sd_events),
	};
	const struct lrb_config *cfg = c == LRB_SD_DISCARD ?
					       &lrb_sd_discard_cfg :
					       &lrb_sd_flight_cfg;
	struct lrb_kchan *kc;

	kc = c == LRB_SD_FLIGHT && region ? lrb_sd_create_persistent(&attr) :
					    lrb_kchan_create(cfg, &attr);
	if (IS_ERR(kc)) {
		pr_err("cannot create channel %s (subbuf_size=%lu num_subbuf=%lu): %pe; %s\n",
		       lrb_sd_names[c], subbuf_size, num_subbuf, kc,
		       PTR_ERR(kc) == -EEXIST ?
		       "a channel of that name exists: unload its client or choose another name=" :
		       PTR_ERR(kc) == -ENOMEM ?
		       "lower subbuf_size or num_subbuf" :
		       "see the lrb messages above");
		return PTR_ERR(kc);
	}
	lrb_sd_kc[c] = kc;
	lrb_sd_chan[c] = lrb_kchan_chan(kc);
	return 0;
}

static void lrb_sd_destroy(void)
{
	unsigned int c;

	for (c = 0; c < LRB_SD_NR_CHANS; c++) {
		if (!lrb_sd_kc[c])
			continue;
		lrb_kchan_destroy(lrb_sd_kc[c]);
		lrb_sd_kc[c] = NULL;
		lrb_sd_chan[c] = NULL;
	}
	lrb_sd_persistent = false;
}

static int __init lrb_sd_init(void)
{
	int ret;

	ret = lrb_sd_check_params();
	if (ret)
		return ret;
	lrb_sd_data_len = rec_size - LRB_SAMPLE_IO_MIN;
	lrb_sd_period = ns_to_ktime(rate ? max_t(u64, NSEC_PER_SEC / rate,
						 LRB_SD_TICK_NS) :
				    LRB_SD_TICK_NS);
	snprintf(lrb_sd_names[LRB_SD_DISCARD], sizeof(lrb_sd_names[0]), "%s",
		 chan_name);
	snprintf(lrb_sd_names[LRB_SD_FLIGHT], sizeof(lrb_sd_names[0]),
		 "%s" LRB_SD_FR_SUFFIX, chan_name);

	ret = lrb_sd_alloc();
	if (ret) {
		pr_err("cannot allocate the record scratch (size=%u for %u CPUs): lower size\n",
		       rec_size, nr_cpu_ids);
		return ret;
	}
	if (strcmp(mode, "overwrite")) {
		ret = lrb_sd_create(LRB_SD_DISCARD);
		if (ret)
			goto fail;
	}
	if (strcmp(mode, "discard")) {
		ret = lrb_sd_create(LRB_SD_FLIGHT);
		if (ret)
			goto fail;
	}

	lrb_sd_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	if (IS_ERR(lrb_sd_dir)) {
		ret = PTR_ERR(lrb_sd_dir);
		pr_err("cannot create debugfs directory %s: %pe; boot without debugfs=off\n",
		       KBUILD_MODNAME, lrb_sd_dir);
		goto fail;
	}
	debugfs_create_file("ctl", 0200, lrb_sd_dir, NULL, &lrb_sd_ctl_fops);
	debugfs_create_file("written", 0400, lrb_sd_dir, NULL,
			    &lrb_sd_written_fops);

	if (autostart) {
		mutex_lock(&lrb_sd_lock);
		ret = lrb_sd_start();
		mutex_unlock(&lrb_sd_lock);
		if (ret)
			goto debugfs;
	}
	return 0;

debugfs:
	debugfs_remove(lrb_sd_dir);
fail:
	lrb_sd_destroy();
	kvfree(lrb_sd_scratch);
	return ret;
}

static void __exit lrb_sd_exit(void)
{
	/* first, so that no ctl command runs any more */
	debugfs_remove(lrb_sd_dir);
	lrb_sd_stop();
	lrb_sd_destroy();
	kvfree(lrb_sd_scratch);
}

module_init(lrb_sd_init);
module_exit(lrb_sd_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lrb sample: a driver logging I/O completions from hardirq and kthread context on every CPU");
