// SPDX-License-Identifier: GPL-2.0
/*
 * The channel-level files: /dev/lrb/<channel>/metadata, the CTF metadata
 * of the channel's streams, and /dev/lrb/<channel>/stats, the counters of
 * every per-CPU buffer as text; a previous run's channel also has
 * /dev/lrb/<channel>.previous/release, which lets its region go.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "lrb_module.h"

static struct lrb_kchan *lrb_kdev_kchan(struct inode *inode)
{
	return container_of(inode->i_cdev, struct lrb_kdev, cdev)->kc;
}

static int lrb_chan_file_open(struct inode *inode, struct file *file)
{
	if ((file->f_flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	file->private_data = lrb_kdev_kchan(inode);
	return 0;
}

static ssize_t lrb_metadata_read(struct file *file, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct lrb_kchan *kc = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, kc->metadata,
				       kc->metadata_len);
}

const struct file_operations lrb_metadata_fops = {
	.owner = THIS_MODULE,
	.open = lrb_chan_file_open,
	.read = lrb_metadata_read,
	.llseek = default_llseek,
};

static void lrb_stats_line(struct seq_file *m, const char *name,
			   const struct lrb_buf_counters *c, u64 recycled)
{
	seq_printf(m, "%s records_written=%llu lost_full=%llu lost_wrap=%llu lost_big=%llu lost_nest=%llu lost_packets=%llu produced=%llu consumed=%llu packets_read=%llu bytes_read=%llu pages_spliced=%llu lost_overwrite=%llu pages_recycled=%llu\n",
		   name, c->records_written, c->lost_full, c->lost_wrap,
		   c->lost_big, c->lost_nest, c->lost_packets, c->produced,
		   c->consumed, c->packets_read, c->bytes_read,
		   c->pages_spliced, c->lost_overwrite, recycled);
}

/*
 * A previous run's channel: what recovery kept and dropped, per buffer of
 * that run, each drop cause as packets/records/bytes.
 */
/* The loss counters in @mask by name, "full,wrap", or "none". */
static void lrb_untrusted_list(struct seq_file *m, u32 mask)
{
	const char *sep = "";
	unsigned int i;

	if (!mask)
		seq_puts(m, "none");
	for (i = 0; i < LRB_REGION_NR_LOST; i++) {
		if (!(mask & (1U << i)))
			continue;
		seq_printf(m, "%s%s", sep, lrb_region_lost_name(i));
		sep = ",";
	}
}

static void lrb_recovery_lines(struct seq_file *m, struct lrb_kchan *kc)
{
	const struct lrb_krecovered *kr = kc->recovered;
	const struct lrb_recovery_stats *st;
	unsigned int b, c;

	seq_printf(m, "recovery run_id=%llu region=%s bufs=%u released=%d time_us=%llu\n",
		   kr->run_id, lrb_kregion_name(kc->region), kr->nr_bufs,
		   READ_ONCE(kr->released), kr->time_us);
	for (b = 0; b < kr->nr_bufs; b++) {
		st = &kr->stats[b];
		seq_printf(m, "recovery cpu%u packets=%llu records=%llu bytes=%llu lost_full=%llu lost_wrap=%llu lost_big=%llu lost_nest=%llu lost_overwrite=%llu untrusted=",
			   b, st->packets, st->records, st->bytes,
			   st->lost_full, st->lost_wrap, st->lost_big,
			   st->lost_nest, st->lost_overwrite);
		lrb_untrusted_list(m, st->untrusted);
		for (c = 0; c < LRB_DROP_NR; c++)
			seq_printf(m, " drop_%s=%llu/%llu/%llu",
				   lrb_drop_cause_name(c), st->drop_packets[c],
				   st->drop_records[c], st->drop_bytes[c]);
		seq_putc(m, '\n');
	}
}

static int lrb_stats_show(struct seq_file *m, void *v)
{
	struct lrb_kchan *kc = m->private;
	struct lrb_buf_counters c, total = {};
	u64 recycled, total_recycled = 0;
	unsigned int cpu, i;
	char name[16];

	for_each_possible_cpu(cpu) {
		u64 *from = (u64 *)&c, *to = (u64 *)&total;

		lrb_kbuf_counters(&kc->kbufs[cpu], &c);
		recycled = atomic64_read(&kc->kbufs[cpu].pages_recycled);
		snprintf(name, sizeof(name), "cpu%u", cpu);
		lrb_stats_line(m, name, &c, recycled);
		for (i = 0; i < sizeof(c) / sizeof(u64); i++)
			to[i] += from[i];
		total_recycled += recycled;
	}
	lrb_stats_line(m, "total", &total, total_recycled);
	if (kc->recovered)
		lrb_recovery_lines(m, kc);
	return 0;
}

static int lrb_stats_open(struct inode *inode, struct file *file)
{
	if ((file->f_flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	return single_open(file, lrb_stats_show, lrb_kdev_kchan(inode));
}

const struct file_operations lrb_stats_fops = {
	.owner = THIS_MODULE,
	.open = lrb_stats_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static int lrb_release_open(struct inode *inode, struct file *file)
{
	if ((file->f_flags & O_ACCMODE) != O_WRONLY)
		return -EACCES;
	file->private_data = lrb_kdev_kchan(inode);
	return 0;
}

/* Any write releases: the bytes written do not matter. */
static ssize_t lrb_release_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	lrb_kregion_release(file->private_data);
	return count;
}

const struct file_operations lrb_release_fops = {
	.owner = THIS_MODULE,
	.open = lrb_release_open,
	.write = lrb_release_write,
	.llseek = noop_llseek,
};
