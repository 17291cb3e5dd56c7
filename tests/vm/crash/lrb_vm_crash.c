// SPDX-License-Identifier: GPL-2.0
/*
 * lrb_vm_crash.ko: the helper of make vmtest-crash (tests/vm/crash/run.sh).
 *
 * It crashes the machine from hardirq context, corrupts a reserve_mem=
 * region, and tells the host the driver sample's last sequence numbers:
 * at panic on the console (after the other CPUs were stopped, so they are
 * final), and for a reset that runs no code in the guest, the physical
 * addresses of the counters, which the host reads with the VM stopped.
 *
 * The sample's counters are found by address: @counters is the per-CPU
 * address of its lrb_sd_cpus (from /proc/kallsyms) and @seq_off the
 * offsets of the task and irq streams' seq in it (from the sample's debug
 * information, on the host); the test compares "seqs" with the sample's
 * own "written" before it relies on them.
 *
 * debugfs lrb_vm_crash/:
 *   seqs         per CPU: "cpuN task=T irq=I", the next sequence numbers
 *   panic_irq    write anything: a pinned hardirq hrtimer on this CPU
 *                calls panic() 1 ms later
 *   corrupt      write "N SEED [KINDS]": at the next panic, after the
 *                counters, N bytes of region @region are overwritten with
 *                random values at random offsets of the layout lrb put
 *                there, each of a kind KINDS allows (a bit mask, default
 *                all): 1 the header and metadata (under the header's
 *                checksum), 2 the descriptors, 4 packet headers, 8 any
 *                byte of the packets; the whole region if it holds no lrb
 *                layout. At the panic, not before: the
 *                live writers trust their descriptors, as a crash leaves
 *                them; what must survive bad bytes is the next boot.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/panic_notifier.h>
#include <linux/percpu.h>
#include <linux/prandom.h>
#include <linux/uaccess.h>

#include <uapi/lrb/lrb_region.h>

static unsigned long counters;
module_param(counters, ulong, 0444);
MODULE_PARM_DESC(counters, "per-CPU address of the driver sample's lrb_sd_cpus");

static unsigned int seq_off[2];
static int nr_seq_off;
module_param_array(seq_off, uint, &nr_seq_off, 0444);
MODULE_PARM_DESC(seq_off, "offsets of the task and irq seq in lrb_sd_cpus");

static char *region = "";
module_param(region, charp, 0444);
MODULE_PARM_DESC(region, "reserve_mem= name of the region corrupt overwrites");

/* Bytes of a packet header targeted: lrb's is 64 (LRB_PACKET_HEADER_SIZE). */
#define LRB_VC_PH_BYTES 64
#define LRB_VC_MAX_CORRUPT 100000

static struct dentry *lrb_vc_dir;
/* the region, mapped when corrupt is armed, and what to do at panic */
static u8 *lrb_vc_base;
static u64 lrb_vc_size;
static unsigned int lrb_vc_nr;
static unsigned int lrb_vc_kinds;
static u64 lrb_vc_seed;

/* The parts of a region corrupt targets, by kind. */
struct lrb_vc_layout {
	u64 desc;
	u64 data;
	u64 extent;
	u64 sb;
};

static void lrb_vc_corrupt(void);
static DEFINE_PER_CPU(struct hrtimer, lrb_vc_timer);

static u64 lrb_vc_seq(unsigned int cpu, unsigned int ctx)
{
	void __percpu *p = (void __percpu *)counters;

	return READ_ONCE(*(u64 *)((char *)per_cpu_ptr(p, cpu) + seq_off[ctx]));
}

static int lrb_vc_panic(struct notifier_block *nb, unsigned long ev, void *msg)
{
	unsigned int cpu;

	if (counters)
		for_each_possible_cpu(cpu)
			pr_emerg("at panic: cpu%u task=%llu irq=%llu\n", cpu,
				 lrb_vc_seq(cpu, 0), lrb_vc_seq(cpu, 1));
	if (lrb_vc_nr)
		lrb_vc_corrupt();
	return NOTIFY_DONE;
}

static struct notifier_block lrb_vc_panic_nb = {
	.notifier_call = lrb_vc_panic,
	/* before others, which may never return */
	.priority = INT_MAX,
};

static int lrb_vc_seqs_show(struct seq_file *m, void *unused)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		seq_printf(m, "cpu%u task=%llu irq=%llu\n", cpu,
			   lrb_vc_seq(cpu, 0), lrb_vc_seq(cpu, 1));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lrb_vc_seqs);

static enum hrtimer_restart lrb_vc_fire(struct hrtimer *t)
{
	panic("lrb_vm_crash: panic in hardirq context on CPU %d\n",
	      smp_processor_id());
	return HRTIMER_NORESTART;
}

static ssize_t lrb_vc_panic_irq_write(struct file *file,
				      const char __user *ubuf, size_t count,
				      loff_t *ppos)
{
	struct hrtimer *t;

	preempt_disable();
	t = this_cpu_ptr(&lrb_vc_timer);
	pr_info("panic in hardirq context on CPU %d in 1 ms\n",
		smp_processor_id());
	hrtimer_start(t, ms_to_ktime(1), HRTIMER_MODE_REL_PINNED_HARD);
	preempt_enable();
	return count;
}

static const struct file_operations lrb_vc_panic_irq_fops = {
	.owner = THIS_MODULE,
	.write = lrb_vc_panic_irq_write,
	.llseek = noop_llseek,
};

/* Where lrb's layout puts things, if the region holds one; else 0. */
static void lrb_vc_layout(struct lrb_vc_layout *l)
{
	const struct lrb_region_header *h = (const void *)lrb_vc_base;

	memset(l, 0, sizeof(*l));
	l->extent = lrb_vc_size;
	if (lrb_vc_size < sizeof(*h) || h->magic != LRB_REGION_MAGIC ||
	    h->region_size > lrb_vc_size || !is_power_of_2(h->subbuf_size) ||
	    !h->desc_offset || h->desc_offset >= h->data_offset ||
	    h->data_offset + h->subbuf_size > h->region_size)
		return;
	l->desc = h->desc_offset;
	l->data = h->data_offset;
	l->extent = h->region_size;
	l->sb = h->subbuf_size;
}

static u64 lrb_vc_rand64(struct rnd_state *rs)
{
	return ((u64)prandom_u32_state(rs) << 32) | prandom_u32_state(rs);
}

/* An offset of a kind @lrb_vc_kinds allows. */
static u64 lrb_vc_offset(struct rnd_state *rs, const struct lrb_vc_layout *l)
{
	unsigned int kind;

	if (!l->sb)
		return lrb_vc_rand64(rs) % l->extent;
	do
		kind = prandom_u32_state(rs) % 4;
	while (!(lrb_vc_kinds & BIT(kind)));
	switch (kind) {
	case 0:
		return lrb_vc_rand64(rs) % l->desc;
	case 1:
		return l->desc + lrb_vc_rand64(rs) % (l->data - l->desc);
	case 2:
		return l->data +
		       lrb_vc_rand64(rs) % ((l->extent - l->data) / l->sb) * l->sb +
		       prandom_u32_state(rs) % LRB_VC_PH_BYTES;
	default:
		return l->data + lrb_vc_rand64(rs) % (l->extent - l->data);
	}
}

/* At panic: the other CPUs are stopped, nothing writes the region. */
static void lrb_vc_corrupt(void)
{
	struct lrb_vc_layout l;
	struct rnd_state rs;
	unsigned int i;
	u64 off;
	u8 v;

	lrb_vc_layout(&l);
	prandom_seed_state(&rs, lrb_vc_seed);
	for (i = 0; i < lrb_vc_nr; i++) {
		off = lrb_vc_offset(&rs, &l);
		v = prandom_u32_state(&rs);
		if (lrb_vc_base[off] == v)
			v = ~v;
		if (i < 16)
			pr_emerg("corrupt: offset %#llx: %#04x -> %#04x\n", off,
				 lrb_vc_base[off], v);
		lrb_vc_base[off] = v;
	}
	pr_emerg("corrupt: %u bytes overwritten in region %s (kinds %#x; descriptors at %#llx, packets at %#llx to %#llx), seed %llu\n",
		 lrb_vc_nr, region, lrb_vc_kinds, l.desc, l.data, l.extent,
		 lrb_vc_seed);
}

static ssize_t lrb_vc_corrupt_write(struct file *file,
				    const char __user *ubuf, size_t count,
				    loff_t *ppos)
{
	phys_addr_t start, size;
	unsigned int n;
	char buf[64];
	unsigned int kinds = 0xf;
	u64 seed;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%u %llu %i", &n, &seed, &kinds) < 2 || !n ||
	    n > LRB_VC_MAX_CORRUPT || !(kinds & 0xf)) {
		pr_err("corrupt: write \"N SEED [KINDS]\", N from 1 to %u, KINDS a mask of 1 header, 2 descriptors, 4 packet headers, 8 packets\n",
		       LRB_VC_MAX_CORRUPT);
		return -EINVAL;
	}
	if (!lrb_vc_base) {
		if (!reserve_mem_find_by_name(region, &start, &size)) {
			pr_err("corrupt: no reserve_mem region \"%s\": load with region=NAME of reserve_mem=SIZE:ALIGN:NAME\n",
			       region);
			return -ENOENT;
		}
		lrb_vc_base = memremap(start, size, MEMREMAP_WB);
		if (!lrb_vc_base) {
			pr_err("corrupt: cannot map region %s at %pa\n", region,
			       &start);
			return -ENOMEM;
		}
		lrb_vc_size = size;
	}
	lrb_vc_seed = seed;
	lrb_vc_kinds = kinds;
	WRITE_ONCE(lrb_vc_nr, n);
	pr_info("corrupt: %u bytes of region %s (%#llx bytes, kinds %#x) at the next panic, seed %llu\n",
		n, region, lrb_vc_size, kinds, seed);
	return count;
}

static const struct file_operations lrb_vc_corrupt_fops = {
	.owner = THIS_MODULE,
	.write = lrb_vc_corrupt_write,
	.llseek = noop_llseek,
};

/* Where the host finds a counter: per-CPU memory is mapped or vmalloc'ed. */
static u64 lrb_vc_phys(unsigned int cpu, unsigned int ctx)
{
	void *v = (char *)per_cpu_ptr((void __percpu *)counters, cpu) +
		  seq_off[ctx];

	if (virt_addr_valid(v))
		return virt_to_phys(v);
	return PFN_PHYS(vmalloc_to_pfn(v)) + offset_in_page(v);
}

static int __init lrb_vc_init(void)
{
	unsigned int cpu;

	if (counters && nr_seq_off != 2) {
		pr_err("counters= needs seq_off=TASK,IRQ: the offsets of the sample's seq fields\n");
		return -EINVAL;
	}
	for_each_possible_cpu(cpu) {
		hrtimer_init(per_cpu_ptr(&lrb_vc_timer, cpu), CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		per_cpu_ptr(&lrb_vc_timer, cpu)->function = lrb_vc_fire;
		if (counters)
			pr_info("cpu%u seq at phys task=%#llx irq=%#llx\n", cpu,
				lrb_vc_phys(cpu, 0), lrb_vc_phys(cpu, 1));
	}
	lrb_vc_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("seqs", 0400, lrb_vc_dir, NULL, &lrb_vc_seqs_fops);
	debugfs_create_file("panic_irq", 0200, lrb_vc_dir, NULL,
			    &lrb_vc_panic_irq_fops);
	debugfs_create_file("corrupt", 0200, lrb_vc_dir, NULL,
			    &lrb_vc_corrupt_fops);
	atomic_notifier_chain_register(&panic_notifier_list, &lrb_vc_panic_nb);
	return 0;
}

static void __exit lrb_vc_exit(void)
{
	unsigned int cpu;

	atomic_notifier_chain_unregister(&panic_notifier_list,
					 &lrb_vc_panic_nb);
	debugfs_remove(lrb_vc_dir);
	for_each_possible_cpu(cpu)
		hrtimer_cancel(per_cpu_ptr(&lrb_vc_timer, cpu));
	if (lrb_vc_base)
		memunmap(lrb_vc_base);
}

module_init(lrb_vc_init);
module_exit(lrb_vc_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lrb crash test helper: hardirq panic, region corruption, the sample's last sequence numbers");
