// SPDX-License-Identifier: GPL-2.0
/*
 * lrb_sample_sched.ko: an ftrace-style tracer on lrb. It finds the
 * scheduler and interrupt tracepoints with for_each_kernel_tracepoint()
 * (they are not exported to modules by name), attaches a probe to each, and
 * each probe writes a compact binary record with typed fields into the
 * per-CPU channel "sched", whose CTF metadata declares every event.
 *
 * Probes run with preemption disabled, in any context the tracepoint fires
 * in (sched_switch with the runqueue locked, irq_handler_* in hardirq): the
 * lrb fast paths never sleep nor lock, and readers are woken by irq_work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <trace/events/irq.h>
#include <trace/events/sched.h>

#include <lrb/kchan.h>
#include "lrb_sample.h"

static unsigned long subbuf_size = 65536;
module_param(subbuf_size, ulong, 0444);
MODULE_PARM_DESC(subbuf_size, "bytes per sub-buffer (power of two)");

static unsigned long num_subbuf = 8;
module_param(num_subbuf, ulong, 0444);
MODULE_PARM_DESC(num_subbuf, "sub-buffers per CPU (power of two, >= 2)");

static unsigned int switch_timer_us = 100000;
module_param(switch_timer_us, uint, 0444);
MODULE_PARM_DESC(switch_timer_us, "close partly filled packets this often (0: never)");

static bool autostart = true;
module_param(autostart, bool, 0444);
MODULE_PARM_DESC(autostart, "attach the probes at load (else: write start to debugfs ctl)");

#define LRB_SS_CHAN "sched"

static const struct lrb_config lrb_ss_cfg = {
	.mode = LRB_MODE_DISCARD,
	.alloc = LRB_ALLOC_PER_CPU,
	.wakeup = LRB_WAKEUP_BY_WRITER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.cb.clock_read = lrb_clock_default,
};

enum {
	LRB_SS_SWITCH,
	LRB_SS_WAKEUP,
	LRB_SS_IRQ_ENTRY,
	LRB_SS_IRQ_EXIT,
	LRB_SS_NR_EVENTS,
};

/**
 * struct lrb_ss_counts - a CPU's probe hits and failed reserves
 * @hits: probe calls per event: each is one record attempt
 * @lost: failed reserves per event
 *
 * Updated with this_cpu_inc(), safe against the probes that interrupt
 * each other on a CPU.
 */
struct lrb_ss_counts {
	u64 hits[LRB_SS_NR_EVENTS];
	u64 lost[LRB_SS_NR_EVENTS];
};

static DEFINE_PER_CPU(struct lrb_ss_counts, lrb_ss_counts);

static const struct lrb_event_desc *const lrb_ss_metadata_events[] = {
	&lrb_event_sched_switch,
	&lrb_event_sched_wakeup,
	&lrb_event_irq_handler_entry,
	&lrb_event_irq_handler_exit,
};

static struct lrb_kchan *lrb_ss_kc;
static struct lrb_chan *lrb_ss_chan;
static struct dentry *lrb_ss_dir;

/* Serialises start and stop. */
static DEFINE_MUTEX(lrb_ss_lock);
static bool lrb_ss_running;

/* Count a probe hit, and the record lost if the write @ret failed. */
static __always_inline void lrb_ss_count(unsigned int event, int ret)
{
	this_cpu_inc(lrb_ss_counts.hits[event]);
	if (unlikely(ret))
		this_cpu_inc(lrb_ss_counts.lost[event]);
}

/*
 * prev_state as ftrace reports it, so that its tools' readings apply: one
 * bit per reportable state, none for running, TASK_REPORT_MAX if preempted.
 */
static u32 lrb_ss_prev_state(bool preempt, unsigned int state,
			     struct task_struct *prev)
{
	unsigned int idx;

	if (preempt)
		return TASK_REPORT_MAX;
	idx = __task_state_index(state, prev->exit_state);
	return idx ? BIT(idx - 1) : 0;
}

static void lrb_ss_sched_switch(void *data, bool preempt,
				struct task_struct *prev,
				struct task_struct *next,
				unsigned int prev_state)
{
	lrb_ss_count(LRB_SS_SWITCH,
		     lrb_write_sched_switch(&lrb_ss_cfg, lrb_ss_chan, prev->comm,
					    prev->pid, prev->prio,
					    lrb_ss_prev_state(preempt, prev_state,
							      prev),
					    next->comm, next->pid, next->prio));
}

static void lrb_ss_sched_wakeup(void *data, struct task_struct *p)
{
	lrb_ss_count(LRB_SS_WAKEUP,
		     lrb_write_sched_wakeup(&lrb_ss_cfg, lrb_ss_chan, p->comm,
					    p->pid, p->prio, task_cpu(p)));
}

static void lrb_ss_irq_entry(void *data, int irq, struct irqaction *action)
{
	const char *name = action->name ? action->name : "";

	lrb_ss_count(LRB_SS_IRQ_ENTRY,
		     lrb_write_irq_handler_entry(&lrb_ss_cfg, lrb_ss_chan, irq,
						 strnlen(name, LRB_SAMPLE_IRQ_NAME_MAX),
						 name));
}

static void lrb_ss_irq_exit(void *data, int irq, struct irqaction *action,
			    int ret)
{
	lrb_ss_count(LRB_SS_IRQ_EXIT,
		     lrb_write_irq_handler_exit(&lrb_ss_cfg, lrb_ss_chan, irq,
						ret));
}

/**
 * struct lrb_ss_event - a tracepoint and our probe on it
 * @name: the tracepoint's name, also the event's name in the metadata
 * @probe: our probe
 * @tp: the tracepoint, once found
 * @attached: the probe is registered
 */
struct lrb_ss_event {
	const char *name;
	void *probe;
	struct tracepoint *tp;
	bool attached;
};

static struct lrb_ss_event lrb_ss_events[LRB_SS_NR_EVENTS] = {
	[LRB_SS_SWITCH] = { "sched_switch", lrb_ss_sched_switch },
	[LRB_SS_WAKEUP] = { "sched_wakeup", lrb_ss_sched_wakeup },
	[LRB_SS_IRQ_ENTRY] = { "irq_handler_entry", lrb_ss_irq_entry },
	[LRB_SS_IRQ_EXIT] = { "irq_handler_exit", lrb_ss_irq_exit },
};

/*
 * The probes are registered as void *: have the compiler check each one
 * against its tracepoint's prototype (these helpers only check types).
 */
static void __maybe_unused lrb_ss_check_probe_types(void)
{
	check_trace_callback_type_sched_switch(lrb_ss_sched_switch);
	check_trace_callback_type_sched_wakeup(lrb_ss_sched_wakeup);
	check_trace_callback_type_irq_handler_entry(lrb_ss_irq_entry);
	check_trace_callback_type_irq_handler_exit(lrb_ss_irq_exit);
}

static void lrb_ss_find(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < LRB_SS_NR_EVENTS; i++)
		if (!strcmp(tp->name, lrb_ss_events[i].name))
			lrb_ss_events[i].tp = tp;
}

static int lrb_ss_find_all(void)
{
	unsigned int i;

	for_each_kernel_tracepoint(lrb_ss_find, NULL);
	for (i = 0; i < LRB_SS_NR_EVENTS; i++) {
		if (!lrb_ss_events[i].tp) {
			pr_err("kernel tracepoint %s not found: this kernel lacks it (CONFIG_TRACEPOINTS?); use a kernel that has it\n",
			       lrb_ss_events[i].name);
			return -ENOENT;
		}
	}
	return 0;
}

/*
 * Detach every probe; on return none is running, so the counters are
 * final and the channel may go.
 */
static void lrb_ss_stop(void)
{
	struct lrb_ss_event *ev;
	unsigned int i;
	int ret;

	for (i = 0; i < LRB_SS_NR_EVENTS; i++) {
		ev = &lrb_ss_events[i];
		if (!ev->attached)
			continue;
		ret = tracepoint_probe_unregister(ev->tp, ev->probe, NULL);
		if (ret)
			pr_err("cannot detach the probe from %s: %pe; the kernel keeps calling it, do not unload lrb.ko\n",
			       ev->name, ERR_PTR(ret));
		ev->attached = false;
	}
	tracepoint_synchronize_unregister();
	lrb_ss_running = false;
}

static int lrb_ss_start(void)
{
	struct lrb_ss_event *ev;
	unsigned int i;
	int ret;

	if (lrb_ss_running)
		return 0;
	lrb_ss_running = true;
	for (i = 0; i < LRB_SS_NR_EVENTS; i++) {
		ev = &lrb_ss_events[i];
		ret = tracepoint_probe_register(ev->tp, ev->probe, NULL);
		if (ret) {
			pr_err("cannot attach a probe to %s: %pe; is another copy of this module loaded?\n",
			       ev->name, ERR_PTR(ret));
			lrb_ss_stop();
			return ret;
		}
		ev->attached = true;
	}
	return 0;
}

static ssize_t lrb_ss_ctl_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char cmd[16];
	int ret = 0;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';

	mutex_lock(&lrb_ss_lock);
	if (sysfs_streq(cmd, "start")) {
		ret = lrb_ss_start();
	} else if (sysfs_streq(cmd, "stop")) {
		if (lrb_ss_running)
			lrb_ss_stop();
	} else if (sysfs_streq(cmd, "flush")) {
		lrb_channel_flush(lrb_ss_chan);
	} else {
		pr_err("unknown ctl command \"%s\": write start, stop or flush\n",
		       strim(cmd));
		ret = -EINVAL;
	}
	mutex_unlock(&lrb_ss_lock);
	return ret ? ret : count;
}

static const struct file_operations lrb_ss_ctl_fops = {
	.owner = THIS_MODULE,
	.write = lrb_ss_ctl_write,
	.llseek = noop_llseek,
};

static int lrb_ss_written_show(struct seq_file *m, void *unused)
{
	u64 hits, lost, n, total_hits = 0, total_lost = 0;
	struct lrb_ss_counts *pc;
	unsigned int cpu, i;

	seq_printf(m, "running=%d\nchannel " LRB_SS_CHAN " mode=discard\n",
		   READ_ONCE(lrb_ss_running));
	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(&lrb_ss_counts, cpu);
		hits = 0;
		lost = 0;
		for (i = 0; i < LRB_SS_NR_EVENTS; i++) {
			hits += READ_ONCE(pc->hits[i]);
			lost += READ_ONCE(pc->lost[i]);
		}
		seq_printf(m, "cpu%u attempts=%llu lost=%llu", cpu, hits, lost);
		for (i = 0; i < LRB_SS_NR_EVENTS; i++) {
			n = READ_ONCE(pc->hits[i]);
			seq_printf(m, " %s=%llu", lrb_ss_events[i].name, n);
		}
		seq_putc(m, '\n');
		total_hits += hits;
		total_lost += lost;
	}
	seq_printf(m, "total attempts=%llu lost=%llu\n", total_hits,
		   total_lost);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lrb_ss_written);

static int lrb_ss_check_params(void)
{
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
	return 0;
}

static int __init lrb_ss_init(void)
{
	struct lrb_kchan_attr attr = {
		.name = LRB_SS_CHAN,
		.chan.subbuf_size = subbuf_size,
		.chan.num_subbuf = num_subbuf,
		.switch_timer_us = switch_timer_us,
		.events = lrb_ss_metadata_events,
		.nr_events = ARRAY_SIZE(lrb_ss_metadata_events),
	};
	int ret;

	BUILD_BUG_ON(TASK_COMM_LEN != LRB_SAMPLE_COMM_LEN);
	ret = lrb_ss_check_params();
	if (ret)
		return ret;
	ret = lrb_ss_find_all();
	if (ret)
		return ret;

	lrb_ss_kc = lrb_kchan_create(&lrb_ss_cfg, &attr);
	if (IS_ERR(lrb_ss_kc)) {
		ret = PTR_ERR(lrb_ss_kc);
		pr_err("cannot create channel %s (subbuf_size=%lu num_subbuf=%lu): %pe; %s\n",
		       LRB_SS_CHAN, subbuf_size, num_subbuf, lrb_ss_kc,
		       ret == -EEXIST ? "a channel of that name exists: unload its client first" :
		       ret == -ENOMEM ? "lower subbuf_size or num_subbuf" :
		       "see the lrb messages above");
		return ret;
	}
	lrb_ss_chan = lrb_kchan_chan(lrb_ss_kc);

	lrb_ss_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	if (IS_ERR(lrb_ss_dir)) {
		ret = PTR_ERR(lrb_ss_dir);
		pr_err("cannot create debugfs directory %s: %pe; boot without debugfs=off\n",
		       KBUILD_MODNAME, lrb_ss_dir);
		goto destroy;
	}
	debugfs_create_file("ctl", 0200, lrb_ss_dir, NULL, &lrb_ss_ctl_fops);
	debugfs_create_file("written", 0400, lrb_ss_dir, NULL,
			    &lrb_ss_written_fops);

	if (autostart) {
		mutex_lock(&lrb_ss_lock);
		ret = lrb_ss_start();
		mutex_unlock(&lrb_ss_lock);
		if (ret)
			goto debugfs;
	}
	return 0;

debugfs:
	debugfs_remove(lrb_ss_dir);
destroy:
	lrb_kchan_destroy(lrb_ss_kc);
	return ret;
}

static void __exit lrb_ss_exit(void)
{
	/* first, so that no ctl command runs any more */
	debugfs_remove(lrb_ss_dir);
	if (lrb_ss_running)
		lrb_ss_stop();
	lrb_kchan_destroy(lrb_ss_kc);
}

module_init(lrb_ss_init);
module_exit(lrb_ss_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lrb sample: scheduler and interrupt tracepoints recorded as typed binary events");
