// SPDX-License-Identifier: GPL-2.0
/*
 * lrb_vm_client.ko: the writer side of the VM end-to-end tests.
 *
 * It creates one lrb.ko channel and writes struct lrb_vm_record test
 * records into it from a kthread per CPU (task context) and a pinned hard
 * hrtimer per CPU (hardirq context). Every attempt takes the next sequence
 * number of its (CPU, context) stream, so the checkers can tell each lost
 * record from the gaps, and the attempts and failed reserves are counted
 * per CPU for the debugfs file "written". The debugfs file "ctl" starts,
 * stops (quiesces) and destroys the writers and channel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <lrb/kchan.h>
#include "vm_event.h"

static char *chan_name = "vmtest";
module_param_named(name, chan_name, charp, 0444);
MODULE_PARM_DESC(name, "channel name: /dev/lrb/<name>");

static char *mode = "discard";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "\"discard\" or \"overwrite\"");

static unsigned long subbuf_size = 16384;
module_param(subbuf_size, ulong, 0444);
MODULE_PARM_DESC(subbuf_size, "bytes per sub-buffer");

static unsigned long num_subbuf = 8;
module_param(num_subbuf, ulong, 0444);
MODULE_PARM_DESC(num_subbuf, "sub-buffers per CPU");

static unsigned int rec_size = 64;
module_param_named(size, rec_size, uint, 0444);
MODULE_PARM_DESC(size, "payload bytes per record, 20..65535");

static unsigned int task_batch = 64;
module_param(task_batch, uint, 0444);
MODULE_PARM_DESC(task_batch,
		 "records per round of each CPU's kthread (0: no task writers)");

static unsigned int task_interval_us;
module_param(task_interval_us, uint, 0444);
MODULE_PARM_DESC(task_interval_us, "sleep between rounds (0: cond_resched)");

static unsigned int irq_interval_us = 1000;
module_param(irq_interval_us, uint, 0444);
MODULE_PARM_DESC(irq_interval_us,
		 "period of each CPU's hardirq timer (0: no irq writers)");

static unsigned int irq_batch = 4;
module_param(irq_batch, uint, 0444);
MODULE_PARM_DESC(irq_batch, "records per timer tick, 1..1024");

static unsigned long max_records;
module_param(max_records, ulong, 0444);
MODULE_PARM_DESC(max_records,
		 "attempts per CPU and context before stopping (0: no limit)");

static unsigned int switch_timer_us;
module_param(switch_timer_us, uint, 0444);
MODULE_PARM_DESC(switch_timer_us, "channel switch timer (0: none)");

static unsigned int read_timer_us;
module_param(read_timer_us, uint, 0444);
MODULE_PARM_DESC(read_timer_us,
		 "channel read timer; nonzero selects LRB_WAKEUP_BY_TIMER");

static bool autostart = true;
module_param(autostart, bool, 0444);
MODULE_PARM_DESC(autostart, "start the writers at load");

/* Keeps a hardirq tick short: it delays everything else on its CPU. */
#define LRB_VM_IRQ_BATCH_MAX 1024
/* Keeps a round, run without sleeping, short enough for the watchdogs. */
#define LRB_VM_TASK_BATCH_MAX 65536

/*
 * One constant configuration per mode and wakeup: each writer below is
 * specialised for one of them by the inline fast paths.
 */
#define LRB_VM_CFG(m, w) {					\
	.mode = (m),						\
	.alloc = LRB_ALLOC_PER_CPU,				\
	.wakeup = (w),						\
	.header = LRB_HEADER_COMPACT,				\
	.tsc_bits = 27,						\
	.cb.clock_read = lrb_clock_default,			\
}

static const struct lrb_config lrb_vm_discard =
	LRB_VM_CFG(LRB_MODE_DISCARD, LRB_WAKEUP_BY_WRITER);
static const struct lrb_config lrb_vm_discard_timer =
	LRB_VM_CFG(LRB_MODE_DISCARD, LRB_WAKEUP_BY_TIMER);
static const struct lrb_config lrb_vm_overwrite =
	LRB_VM_CFG(LRB_MODE_OVERWRITE, LRB_WAKEUP_BY_WRITER);
static const struct lrb_config lrb_vm_overwrite_timer =
	LRB_VM_CFG(LRB_MODE_OVERWRITE, LRB_WAKEUP_BY_TIMER);

/**
 * struct lrb_vm_cpu - a CPU's writers and counters
 * @seq: next sequence number of each context's stream: also its attempts
 * @lost: failed reserves of each context (kept apart so that the irq
 *	writer never updates a counter the task writer is updating)
 * @data: each context's scratch for a record's data
 * @timer: the irq writer
 * @task: the task writer created for this CPU; it may run elsewhere while
 *	this CPU is offline
 */
struct lrb_vm_cpu {
	u64 seq[LRB_VM_NR_CTX];
	unsigned long lost[LRB_VM_NR_CTX];
	u8 *data[LRB_VM_NR_CTX];
	struct hrtimer timer;
	struct task_struct *task;
};

static DEFINE_PER_CPU(struct lrb_vm_cpu, lrb_vm_cpus);

static const struct lrb_config *lrb_vm_cfg;
static struct lrb_kchan *lrb_vm_kc;
static struct lrb_chan *lrb_vm_chan;
static u8 *lrb_vm_scratch;
static u16 lrb_vm_data_len;
static ktime_t lrb_vm_irq_period;
static int lrb_vm_cpuhp_state;
static struct dentry *lrb_vm_dir;

/* Serialises ctl commands; running also changes under cpus_read_lock(). */
static DEFINE_MUTEX(lrb_vm_lock);
static bool lrb_vm_running;
static bool lrb_vm_destroyed;

/*
 * One record attempt in context @ctx on the current CPU. Returns false,
 * without an attempt, once max_records attempts were made.
 */
static __always_inline bool lrb_vm_write(const struct lrb_config *cfg, u8 ctx)
{
	unsigned int cpu = get_cpu();
	struct lrb_vm_cpu *pc = this_cpu_ptr(&lrb_vm_cpus);
	u16 len = lrb_vm_data_len;
	u8 *data = pc->data[ctx];
	u64 seq = pc->seq[ctx];
	u32 i;

	if (max_records && seq >= max_records) {
		put_cpu();
		return false;
	}
	WRITE_ONCE(pc->seq[ctx], seq + 1);

	/* the payload is ready before reserving, as a real tracer's is */
	for (i = 0; i < len; i++)
		data[i] = lrb_vm_data_byte(seq, cpu, ctx, i);
	if (lrb_write_lrb_vm_record(cfg, lrb_vm_chan, seq, cpu, len, ctx, 0,
				    lrb_vm_csum(data, len, seq), data))
		WRITE_ONCE(pc->lost[ctx], pc->lost[ctx] + 1);
	put_cpu();
	return true;
}

static __always_inline unsigned int
lrb_vm_write_batch_cfg(const struct lrb_config *cfg, u8 ctx, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!lrb_vm_write(cfg, ctx))
			break;
	return i;
}

/* Write up to @n records; return how many were attempted. */
static unsigned int lrb_vm_write_batch(u8 ctx, unsigned int n)
{
	/* each call passes a constant cfg, so each is specialised */
	if (lrb_vm_cfg == &lrb_vm_discard)
		return lrb_vm_write_batch_cfg(&lrb_vm_discard, ctx, n);
	if (lrb_vm_cfg == &lrb_vm_discard_timer)
		return lrb_vm_write_batch_cfg(&lrb_vm_discard_timer, ctx, n);
	if (lrb_vm_cfg == &lrb_vm_overwrite)
		return lrb_vm_write_batch_cfg(&lrb_vm_overwrite, ctx, n);
	return lrb_vm_write_batch_cfg(&lrb_vm_overwrite_timer, ctx, n);
}

/* Sleep, unless kthread_stop() was called: it wakes us up. */
static void lrb_vm_task_sleep(u64 ns)
{
	ktime_t t = ns_to_ktime(ns);

	set_current_state(TASK_INTERRUPTIBLE);
	if (!kthread_should_stop())
		schedule_hrtimeout(&t, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

static int lrb_vm_task_fn(void *unused)
{
	while (!kthread_should_stop()) {
		/*
		 * This CPU's stream reached max_records: poll, as a CPU
		 * hotplug may move us to a CPU whose stream has not.
		 */
		if (lrb_vm_write_batch(LRB_VM_CTX_TASK, task_batch) < task_batch)
			lrb_vm_task_sleep(10 * NSEC_PER_MSEC);
		else if (task_interval_us)
			lrb_vm_task_sleep((u64)task_interval_us * NSEC_PER_USEC);
		else
			cond_resched();
	}
	return 0;
}

static enum hrtimer_restart lrb_vm_tick(struct hrtimer *timer)
{
	if (lrb_vm_write_batch(LRB_VM_CTX_IRQ, irq_batch) < irq_batch)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, lrb_vm_irq_period);
	return HRTIMER_RESTART;
}

/* Runs on the timer's CPU, as a pinned timer must be started there. */
static void lrb_vm_timer_start(void *timer)
{
	hrtimer_start(timer, lrb_vm_irq_period, HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * Start @cpu's writers, or move its task writer back home after it was
 * pushed off by a CPU hotplug. Called with CPU hotplug excluded and @cpu
 * online: under cpus_read_lock() or from @cpu's hotplug callback.
 */
static int lrb_vm_start_cpu(unsigned int cpu)
{
	struct lrb_vm_cpu *pc = per_cpu_ptr(&lrb_vm_cpus, cpu);
	struct task_struct *task;

	if (task_batch) {
		if (pc->task) {
			set_cpus_allowed_ptr(pc->task, cpumask_of(cpu));
		} else {
			task = kthread_run_on_cpu(lrb_vm_task_fn, NULL, cpu,
						  "lrb_vm_task/%u");
			if (IS_ERR(task)) {
				pr_err("cannot start the task writer of CPU %u: %pe\n",
				       cpu, task);
				return PTR_ERR(task);
			}
			pc->task = task;
		}
	}
	if (irq_interval_us)
		smp_call_function_single(cpu, lrb_vm_timer_start, &pc->timer, 1);
	return 0;
}

static int lrb_vm_cpu_online(unsigned int cpu)
{
	return lrb_vm_running ? lrb_vm_start_cpu(cpu) : 0;
}

/* No irq writer may fire on, or be migrated from, a dead CPU. */
static int lrb_vm_cpu_offline(unsigned int cpu)
{
	hrtimer_cancel(per_cpu_ptr(&lrb_vm_cpus.timer, cpu));
	return 0;
}

/* Stop all writers; every record they reserved is committed on return. */
static void lrb_vm_stop(void)
{
	struct lrb_vm_cpu *pc;
	unsigned int cpu;

	if (!lrb_vm_running)
		return;
	cpus_read_lock();
	WRITE_ONCE(lrb_vm_running, false);
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(&lrb_vm_cpus, cpu);
		hrtimer_cancel(&pc->timer);
		if (pc->task) {
			kthread_stop(pc->task);
			pc->task = NULL;
		}
	}
	cpus_read_unlock();
	/* writers run with preemption disabled: this waits for them all */
	synchronize_rcu();
}

static int lrb_vm_start(void)
{
	unsigned int cpu;
	int ret = 0;

	if (lrb_vm_destroyed)
		return -ENODEV;
	if (lrb_vm_running)
		return 0;
	/* a CPU offline now gets its writers when it comes online */
	cpus_read_lock();
	WRITE_ONCE(lrb_vm_running, true);
	for_each_online_cpu(cpu) {
		ret = lrb_vm_start_cpu(cpu);
		if (ret)
			break;
	}
	cpus_read_unlock();
	if (ret)
		lrb_vm_stop();
	return ret;
}

static void lrb_vm_destroy(void)
{
	lrb_vm_stop();
	if (lrb_vm_destroyed)
		return;
	lrb_kchan_destroy(lrb_vm_kc);
	lrb_vm_kc = NULL;
	lrb_vm_chan = NULL;
	WRITE_ONCE(lrb_vm_destroyed, true);
}

static ssize_t lrb_vm_ctl_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char cmd[16];
	int ret = 0;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';

	mutex_lock(&lrb_vm_lock);
	if (sysfs_streq(cmd, "start")) {
		ret = lrb_vm_start();
	} else if (sysfs_streq(cmd, "stop")) {
		lrb_vm_stop();
	} else if (sysfs_streq(cmd, "destroy")) {
		lrb_vm_destroy();
	} else if (sysfs_streq(cmd, "flush")) {
		if (lrb_vm_destroyed)
			ret = -ENODEV;
		else
			lrb_channel_flush(lrb_vm_chan);
	} else {
		pr_err("unknown ctl command \"%s\": write start, stop, destroy or flush\n",
		       strim(cmd));
		ret = -EINVAL;
	}
	mutex_unlock(&lrb_vm_lock);
	return ret ? ret : count;
}

static const struct file_operations lrb_vm_ctl_fops = {
	.owner = THIS_MODULE,
	.write = lrb_vm_ctl_write,
	.llseek = noop_llseek,
};

static int lrb_vm_written_show(struct seq_file *m, void *unused)
{
	unsigned long lost, total_lost = 0;
	u64 task, irq, total_task = 0, total_irq = 0;
	struct lrb_vm_cpu *pc;
	unsigned int cpu;

	seq_printf(m, "running=%d\ndestroyed=%d\n", READ_ONCE(lrb_vm_running),
		   READ_ONCE(lrb_vm_destroyed));
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(&lrb_vm_cpus, cpu);
		task = READ_ONCE(pc->seq[LRB_VM_CTX_TASK]);
		irq = READ_ONCE(pc->seq[LRB_VM_CTX_IRQ]);
		lost = READ_ONCE(pc->lost[LRB_VM_CTX_TASK]) +
		       READ_ONCE(pc->lost[LRB_VM_CTX_IRQ]);
		seq_printf(m, "cpu%u task=%llu irq=%llu lost=%lu\n",
			   cpu, task, irq, lost);
		total_task += task;
		total_irq += irq;
		total_lost += lost;
	}
	seq_printf(m, "total task=%llu irq=%llu lost=%lu\n",
		   total_task, total_irq, total_lost);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lrb_vm_written);

static int lrb_vm_check_params(void)
{
	if (rec_size < LRB_VM_RECORD_MIN || rec_size > 65535) {
		pr_err("size=%u: must be %zu..65535 (payload bytes including the record header)\n",
		       rec_size, LRB_VM_RECORD_MIN);
		return -EINVAL;
	}
	if (strcmp(mode, "discard") && strcmp(mode, "overwrite")) {
		pr_err("mode=%s: must be discard or overwrite\n", mode);
		return -EINVAL;
	}
	if (task_batch > LRB_VM_TASK_BATCH_MAX) {
		pr_err("task_batch=%u: must be at most %u (0 disables task writers)\n",
		       task_batch, LRB_VM_TASK_BATCH_MAX);
		return -EINVAL;
	}
	if (irq_interval_us &&
	    (!irq_batch || irq_batch > LRB_VM_IRQ_BATCH_MAX)) {
		pr_err("irq_batch=%u: must be 1..%u (irq_interval_us=0 disables irq writers)\n",
		       irq_batch, LRB_VM_IRQ_BATCH_MAX);
		return -EINVAL;
	}
	return 0;
}

static void lrb_vm_free(void)
{
	kvfree(lrb_vm_scratch);
	lrb_vm_scratch = NULL;
}

/* Give each (CPU, context) its own data scratch, cache-line apart. */
static int lrb_vm_alloc(void)
{
	size_t stride = ALIGN(lrb_vm_data_len, SMP_CACHE_BYTES);
	struct lrb_vm_cpu *pc;
	unsigned int cpu, ctx;

	if (!lrb_vm_data_len)
		return 0;
	lrb_vm_scratch = kvcalloc(nr_cpu_ids * LRB_VM_NR_CTX, stride,
				  GFP_KERNEL);
	if (!lrb_vm_scratch)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(&lrb_vm_cpus, cpu);
		for (ctx = 0; ctx < LRB_VM_NR_CTX; ctx++)
			pc->data[ctx] = lrb_vm_scratch +
					(cpu * LRB_VM_NR_CTX + ctx) * stride;
	}
	return 0;
}

static const struct lrb_event_desc *const lrb_vm_events[] = {
	&lrb_event_lrb_vm_record,
};

static int __init lrb_vm_init(void)
{
	bool overwrite = !strcmp(mode, "overwrite");
	struct lrb_kchan_attr attr = {
		.name = chan_name,
		.chan.subbuf_size = subbuf_size,
		.chan.num_subbuf = num_subbuf,
		.chan.stream_id = 0,
		.switch_timer_us = switch_timer_us,
		.read_timer_us = read_timer_us,
		.events = lrb_vm_events,
		.nr_events = ARRAY_SIZE(lrb_vm_events),
	};
	struct lrb_vm_cpu *pc;
	unsigned int cpu;
	int ret;

	ret = lrb_vm_check_params();
	if (ret)
		return ret;
	if (overwrite)
		lrb_vm_cfg = read_timer_us ? &lrb_vm_overwrite_timer :
					     &lrb_vm_overwrite;
	else
		lrb_vm_cfg = read_timer_us ? &lrb_vm_discard_timer :
					     &lrb_vm_discard;
	lrb_vm_data_len = rec_size - LRB_VM_RECORD_MIN;
	lrb_vm_irq_period = ns_to_ktime((u64)irq_interval_us * NSEC_PER_USEC);

	ret = lrb_vm_alloc();
	if (ret) {
		pr_err("cannot allocate the record scratch (size=%u, %u CPUs)\n",
		       rec_size, nr_cpu_ids);
		return ret;
	}
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(&lrb_vm_cpus, cpu);
		hrtimer_init(&pc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		pc->timer.function = lrb_vm_tick;
	}

	lrb_vm_kc = lrb_kchan_create(lrb_vm_cfg, &attr);
	if (IS_ERR(lrb_vm_kc)) {
		ret = PTR_ERR(lrb_vm_kc);
		pr_err("cannot create channel %s (mode=%s subbuf_size=%lu num_subbuf=%lu switch_timer_us=%u read_timer_us=%u): %pe; check these parameters\n",
		       chan_name, mode, subbuf_size, num_subbuf,
		       switch_timer_us, read_timer_us, lrb_vm_kc);
		goto free;
	}
	lrb_vm_chan = lrb_kchan_chan(lrb_vm_kc);

	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					"lrb_vm_client:online",
					lrb_vm_cpu_online, lrb_vm_cpu_offline);
	if (ret < 0) {
		pr_err("cannot register the CPU hotplug callbacks: %d\n", ret);
		goto destroy;
	}
	lrb_vm_cpuhp_state = ret;

	lrb_vm_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	if (IS_ERR(lrb_vm_dir)) {
		ret = PTR_ERR(lrb_vm_dir);
		pr_err("cannot create debugfs directory %s: %pe; boot without debugfs=off\n",
		       KBUILD_MODNAME, lrb_vm_dir);
		goto cpuhp;
	}
	debugfs_create_file("ctl", 0200, lrb_vm_dir, NULL, &lrb_vm_ctl_fops);
	debugfs_create_file("written", 0400, lrb_vm_dir, NULL,
			    &lrb_vm_written_fops);

	if (autostart) {
		mutex_lock(&lrb_vm_lock);
		ret = lrb_vm_start();
		mutex_unlock(&lrb_vm_lock);
		if (ret)
			goto debugfs;
	}
	return 0;

debugfs:
	debugfs_remove(lrb_vm_dir);
cpuhp:
	cpuhp_remove_state_nocalls(lrb_vm_cpuhp_state);
destroy:
	lrb_kchan_destroy(lrb_vm_kc);
free:
	lrb_vm_free();
	return ret;
}

static void __exit lrb_vm_exit(void)
{
	/* first, so that no ctl command runs concurrently */
	debugfs_remove(lrb_vm_dir);
	lrb_vm_destroy();
	cpuhp_remove_state_nocalls(lrb_vm_cpuhp_state);
	lrb_vm_free();
}

module_init(lrb_vm_init);
module_exit(lrb_vm_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lrb VM test client: writes checkable records from task and hardirq context");
