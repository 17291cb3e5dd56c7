// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU files /dev/lrb/<channel>/cpuN: the consuming reader of one
 * buffer, through read(), splice(), or mmap() and ioctls.
 *
 * read() and splice() share a cursor in the packet they took; they release
 * it once it is fully read. The ioctl reader takes and releases packets
 * explicitly and reads them through its mapping, which shows the pages of
 * the packet held and nothing else: a page is mapped on first access while
 * the packet is held, and unmapped before the packet goes back to writers.
 * splice() moves pages into the pipe and puts other pages in their place,
 * so writers never touch a page a pipe still refers to: pages spliced
 * earlier that the pipes have let go, else fresh zeroed ones.
 */
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pipe_fs_i.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/splice.h>
#include <linux/uaccess.h>

#include "lrb_module.h"

static struct lrb_chan *lrb_kb_chan(struct lrb_kbuf *kb)
{
	return kb->kdev.kc->chan;
}

static int lrb_cpu_open(struct inode *inode, struct file *file)
{
	struct lrb_kbuf *kb = container_of(inode->i_cdev, struct lrb_kbuf,
					   kdev.cdev);
	int ret;

	if ((file->f_flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	ret = lrb_reader_open(kb->buf);
	if (ret)
		return ret;
	kb->holding = false;
	kb->watermark = 1;
	kb->mapping = file->f_mapping;
	file->private_data = kb;
	return stream_open(inode, file);
}

/*
 * Called with kb->lock held. Take the oldest complete packet for
 * consumption: -EAGAIN if there is none yet, -ENODEV if there will be none.
 */
static int lrb_kb_take(struct lrb_kbuf *kb)
{
	bool fin = lrb_kchan_finalized(kb->kdev.kc);
	const struct lrb_packet_header *ph;
	int ret;

	lockdep_assert_held(&kb->lock);
	ret = lrb_get_next_subbuf(kb->buf, &kb->sb);
	/*
	 * Drained, but the last losses are in no packet yet. A previous
	 * run's channel has no writer: its packets carry every count.
	 */
	if (ret == -EAGAIN && fin && !kb->kdev.kc->recovered &&
	    lrb_buf_lost(kb->buf) != kb->last_discarded) {
		lrb_buf_flush_final(kb->buf, kb->last_ts_end);
		ret = lrb_get_next_subbuf(kb->buf, &kb->sb);
	}
	if (ret == -EAGAIN && fin)
		return -ENODEV;
	if (!ret) {
		ph = kb->sb.pages[0];
		kb->last_discarded = ph->events_discarded;
		kb->last_ts_end = max(kb->last_ts_end, ph->timestamp_end);
	}
	return ret;
}

/*
 * Called with kb->lock held: take a packet for read() and splice(), which
 * start at its beginning.
 */
static int lrb_kb_stream_take(struct lrb_kbuf *kb)
{
	int ret;

	lockdep_assert_held(&kb->lock);
	ret = lrb_kb_take(kb);
	if (!ret) {
		WRITE_ONCE(kb->by_ioctl, false);
		kb->cursor = 0;
		WRITE_ONCE(kb->holding, true);
	}
	return ret;
}

/* Called with kb->lock held: hide the held packet from the mapping. */
static void lrb_kb_unmap(struct lrb_kbuf *kb)
{
	struct lrb_chan *chan = lrb_kb_chan(kb);

	lockdep_assert_held(&kb->lock);
	if (!kb->map_valid)
		return;
	mutex_lock(&kb->map_lock);
	kb->map_valid = false;
	unmap_mapping_range(kb->mapping, (loff_t)kb->map_slot * chan->subbuf_size,
			    chan->subbuf_size, 1);
	mutex_unlock(&kb->map_lock);
}

/*
 * Called with kb->lock held: give the held packet back to writers. A packet
 * taken for consumption is consumed, even if the reader (closing its file)
 * did not read it all; the counters say what it did read.
 */
static void lrb_kb_release(struct lrb_kbuf *kb)
{
	lockdep_assert_held(&kb->lock);
	lrb_kb_unmap(kb);
	lrb_put_subbuf(kb->buf, &kb->sb);
	WRITE_ONCE(kb->holding, false);
}

/* the layout of abi.rst, the same for 32-bit and 64-bit programs */
static_assert(sizeof(struct lrb_status) == 144);
static_assert(offsetof(struct lrb_status, counters) == 48);

/*
 * Called with the lock of the buffer's wait queue held, kb->status set:
 * publish the buffer's state in the status page as a seqcount.
 */
static void lrb_kb_status_fill(struct lrb_kbuf *kb)
{
	struct lrb_status *st = page_address(kb->status);
	struct lrb_chan *chan = lrb_kb_chan(kb);
	u32 seq = READ_ONCE(st->seq);
	struct lrb_status now = {
		.seq = seq + 1,
		.size = sizeof(now),
		.flags = lrb_kchan_finalized(kb->kdev.kc) ? LRB_STATUS_FINAL : 0,
		.cpu = kb->cpu,
		.subbuf_size = chan->subbuf_size,
		.num_subbuf = chan->num_subbuf,
		.ready = lrb_buf_complete(kb->buf, chan->num_subbuf),
		.pages_recycled = atomic64_read(&kb->pages_recycled),
	};

	lockdep_assert_held(&kb->buf->wait.wq.lock);
	lrb_kbuf_counters(kb, &now.counters);
	WRITE_ONCE(st->seq, seq + 1);
	/* pairs with the reader's barrier before its second load of seq */
	smp_wmb();
	*st = now;
	/* pairs with the reader's barrier after its first load of seq */
	smp_wmb();
	WRITE_ONCE(st->seq, seq + 2);
}

/* Refresh the status page, if mapped, after a call of the reader. */
static void lrb_kb_status_update(struct lrb_kbuf *kb)
{
	wait_queue_head_t *wq = &kb->buf->wait.wq;
	unsigned long flags;

	if (!READ_ONCE(kb->status))
		return;
	spin_lock_irqsave(&wq->lock, flags);
	if (kb->status)
		lrb_kb_status_fill(kb);
	spin_unlock_irqrestore(&wq->lock, flags);
}

/*
 * On the buffer's wait queue, called with its lock held whenever readers
 * are woken (a packet delivered, the read timer, a flush, the channel's
 * destruction): refresh the status page, wake nobody.
 */
static int lrb_kb_status_wake(struct wait_queue_entry *wait, unsigned int mode,
			      int sync, void *key)
{
	lrb_kb_status_fill(container_of(wait, struct lrb_kbuf, status_wait));
	return 0;
}

/* Map the status page, made on the first call. */
static int lrb_kb_status_mmap(struct lrb_kbuf *kb, struct vm_area_struct *vma)
{
	wait_queue_head_t *wq = &kb->buf->wait.wq;
	struct page *page;
	int ret;

	/* map_lock, not kb->lock: the caller holds mmap_lock */
	mutex_lock(&kb->map_lock);
	if (!kb->status) {
		page = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!page) {
			mutex_unlock(&kb->map_lock);
			return -ENOMEM;
		}
		init_waitqueue_func_entry(&kb->status_wait, lrb_kb_status_wake);
		spin_lock_irq(&wq->lock);
		kb->status = page;
		__add_wait_queue_entry_tail(wq, &kb->status_wait);
		lrb_kb_status_fill(kb);
		spin_unlock_irq(&wq->lock);
	}
	ret = vm_insert_page(vma, vma->vm_start, kb->status);
	mutex_unlock(&kb->map_lock);
	return ret;
}

/* The last user of the file is gone, and every mapping: drop the page. */
static void lrb_kb_status_free(struct lrb_kbuf *kb)
{
	wait_queue_head_t *wq = &kb->buf->wait.wq;
	struct page *page = kb->status;

	if (!page)
		return;
	spin_lock_irq(&wq->lock);
	__remove_wait_queue(wq, &kb->status_wait);
	kb->status = NULL;
	spin_unlock_irq(&wq->lock);
	put_page(page);
}

/*
 * Called with kb->lock held: forget the pages spliced; those still in a
 * pipe are the pipe's alone now.
 */
static void lrb_kb_spliced_free(struct lrb_kbuf *kb)
{
	lockdep_assert_held(&kb->lock);
	while (kb->spliced_len) {
		put_page(kb->spliced[kb->spliced_head]);
		kb->spliced_head = (kb->spliced_head + 1) % kb->spliced_cap;
		kb->spliced_len--;
	}
	kfree(kb->spliced);
	kb->spliced = NULL;
	kb->spliced_cap = 0;
	kb->spliced_head = 0;
}

static int lrb_cpu_release(struct inode *inode, struct file *file)
{
	struct lrb_kbuf *kb = file->private_data;

	mutex_lock(&kb->lock);
	if (kb->holding)
		lrb_kb_release(kb);
	lrb_kb_spliced_free(kb);
	mutex_unlock(&kb->lock);
	lrb_kb_status_free(kb);
	lrb_reader_close(kb->buf);
	return 0;
}

/* Complete packets waiting, counting one partly read by read/splice. */
static bool lrb_kb_ready(struct lrb_kbuf *kb, unsigned long want)
{
	if (READ_ONCE(kb->holding) && !READ_ONCE(kb->by_ioctl))
		return true;
	return lrb_buf_complete(kb->buf, want) >= want;
}

/*
 * Make sure read() or splice() has a packet, waiting for one unless
 * @nonblock. Returns with kb->lock held on success (0) and on -ENODEV (end
 * of file); other errors come without it.
 */
static int lrb_kb_stream_hold(struct lrb_kbuf *kb, bool nonblock)
{
	int ret;

	for (;;) {
		if (mutex_lock_interruptible(&kb->lock))
			return -ERESTARTSYS;
		if (kb->holding) {
			if (!kb->by_ioctl)
				return 0;
			mutex_unlock(&kb->lock);
			return -EBUSY;
		}
		ret = lrb_kb_stream_take(kb);
		if (!ret || ret == -ENODEV)
			return ret;
		mutex_unlock(&kb->lock);
		if (ret != -EAGAIN)
			return ret;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(kb->buf->wait.wq,
					       lrb_kb_ready(kb, 1) ||
					       lrb_kchan_finalized(kb->kdev.kc));
		if (ret)
			return ret;
	}
}

/*
 * What read() and splice() return once the channel has nothing more: the
 * end of the file (0), or ENODEV if it never went live (its creation
 * failed after a reader opened this file).
 */
static int lrb_kb_end(struct lrb_kbuf *kb)
{
	return kb->kdev.kc->failed ? -ENODEV : 0;
}

/* Called with kb->lock held, after read() or splice() advanced. */
static void lrb_kb_stream_advance(struct lrb_kbuf *kb, unsigned long n)
{
	lockdep_assert_held(&kb->lock);
	kb->cursor += n;
	atomic64_add(n, &kb->bytes_read);
	if (kb->cursor == kb->sb.packet_size) {
		atomic64_inc(&kb->packets_read);
		lrb_kb_release(kb);
	}
}

static ssize_t lrb_cpu_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	struct lrb_kbuf *kb = file->private_data;
	ssize_t done = 0;
	int ret;

	if (!count)
		return 0;
	ret = lrb_kb_stream_hold(kb, file->f_flags & O_NONBLOCK);
	if (ret == -ENODEV) {
		mutex_unlock(&kb->lock);
		return lrb_kb_end(kb);
	}
	if (ret)
		return ret;
	while (done < count && kb->holding) {
		unsigned long off = kb->cursor;
		unsigned long in_page = off & ~PAGE_MASK;
		unsigned long n = min3(count - done, kb->sb.packet_size - off,
				       PAGE_SIZE - in_page);

		if (copy_to_user(ubuf + done,
				 (char *)kb->sb.pages[off >> PAGE_SHIFT] + in_page,
				 n)) {
			ret = -EFAULT;
			break;
		}
		done += n;
		lrb_kb_stream_advance(kb, n);
		/* go on with the next packet only if it is complete already */
		if (!kb->holding && done < count)
			lrb_kb_stream_take(kb);
	}
	mutex_unlock(&kb->lock);
	lrb_kb_status_update(kb);
	return done ? done : ret;
}

/*
 * Called with kb->lock held: the oldest page spliced, if nothing but our
 * reference holds it any more (pipes release their pages in order), else
 * NULL. It holds this buffer's bytes only, which writers overwrite.
 */
static struct page *lrb_kb_spliced_free_page(struct lrb_kbuf *kb)
{
	struct page *page;

	lockdep_assert_held(&kb->lock);
	if (!kb->spliced_len)
		return NULL;
	page = kb->spliced[kb->spliced_head];
	if (page_ref_count(page) != 1)
		return NULL;
	/*
	 * Pairs with the full barrier of the last holder's put_page(): its
	 * accesses to the page happen before writers fill it again.
	 */
	smp_acquire__after_ctrl_dep();
	return page;
}

/*
 * Called with kb->lock held: remember @page, given to a pipe, with a
 * reference of ours. Without room the oldest is forgotten: it was not
 * free, so it is the pipe's alone now.
 */
static void lrb_kb_spliced_add(struct lrb_kbuf *kb, struct page *page)
{
	unsigned int cap = 2 * max_t(unsigned int,
					 lrb_kb_chan(kb)->pages_per_subbuf, 16);

	lockdep_assert_held(&kb->lock);
	if (!kb->spliced) {
		kb->spliced = kcalloc(cap, sizeof(*kb->spliced), GFP_KERNEL);
		if (!kb->spliced)
			return;		/* no recycling: splice still works */
		kb->spliced_cap = cap;
	}
	if (kb->spliced_len == kb->spliced_cap) {
		put_page(kb->spliced[kb->spliced_head]);
		kb->spliced_head = (kb->spliced_head + 1) % kb->spliced_cap;
		kb->spliced_len--;
	}
	get_page(page);
	kb->spliced[(kb->spliced_head + kb->spliced_len) % kb->spliced_cap] =
		page;
	kb->spliced_len++;
}

/*
 * A persistent channel's pages are its region's, which stays: the pipe
 * gets a copy of the held packet's page at the cursor.
 */
static void *lrb_kb_page_copy(struct lrb_kbuf *kb)
{
	struct page *page = alloc_page(GFP_KERNEL);

	if (!page)
		return NULL;
	memcpy(page_address(page), kb->sb.pages[kb->cursor >> PAGE_SHIFT],
	       PAGE_SIZE);
	return page_address(page);
}

/*
 * Move whole pages of the held packet into @pipe, each replaced in the
 * buffer by a page a pipe gave back, or else by a fresh page (copied, for
 * a persistent channel). Called with kb->lock and the pipe locked.
 */
static ssize_t lrb_kb_splice_pages(struct lrb_kbuf *kb,
				   struct pipe_inode_info *pipe, size_t len)
{
	unsigned long left = min_t(unsigned long, len,
				   kb->sb.packet_size - kb->cursor);
	ssize_t done = 0;

	lockdep_assert_held(&kb->lock);
	if (!pipe->readers) {
		send_sig(SIGPIPE, current, 0);
		return -EPIPE;
	}
	while (left && !pipe_full(pipe->head, pipe->tail, pipe->max_usage)) {
		struct pipe_buffer pb = {
			.offset = 0,
			.len = PAGE_SIZE,
			/* the kernel's: a pipe may outlive lrb.ko */
			.ops = &nosteal_pipe_buf_ops,
		};
		bool copy = lrb_kb_chan(kb)->region;
		struct page *fresh = copy ? NULL : lrb_kb_spliced_free_page(kb);
		void *page = copy ? lrb_kb_page_copy(kb) :
			     lrb_subbuf_steal_page(kb->buf, &kb->sb,
						   kb->cursor >> PAGE_SHIFT,
						   fresh ? page_address(fresh) :
							   NULL);

		if (!page)
			return done ? done : -ENOMEM;
		if (fresh) {
			/* our reference is the ring's now */
			kb->spliced_head = (kb->spliced_head + 1) %
					   kb->spliced_cap;
			kb->spliced_len--;
			atomic64_inc(&kb->pages_recycled);
		}
		pb.page = virt_to_page(page);
		if (!copy)
			lrb_kb_spliced_add(kb, pb.page);
		/* cannot fail: the pipe has room and readers, and is locked */
		add_to_pipe(pipe, &pb);
		atomic64_inc(&kb->pages_spliced);
		done += PAGE_SIZE;
		left -= PAGE_SIZE;
		lrb_kb_stream_advance(kb, PAGE_SIZE);
	}
	return done ? done : -EAGAIN;
}

static ssize_t lrb_cpu_splice_read(struct file *file, loff_t *ppos,
				   struct pipe_inode_info *pipe, size_t len,
				   unsigned int flags)
{
	struct lrb_kbuf *kb = file->private_data;
	bool nonblock = (flags & SPLICE_F_NONBLOCK) ||
			(file->f_flags & O_NONBLOCK);
	ssize_t ret;

	if (len & ~PAGE_MASK)
		return -EINVAL;
	if (!len)
		return 0;
	ret = lrb_kb_stream_hold(kb, nonblock);
	if (ret == -ENODEV) {
		mutex_unlock(&kb->lock);
		return lrb_kb_end(kb);
	}
	if (ret)
		return ret;
	if (kb->cursor & ~PAGE_MASK)
		ret = -EINVAL;
	else
		ret = lrb_kb_splice_pages(kb, pipe, len);
	mutex_unlock(&kb->lock);
	lrb_kb_status_update(kb);
	return ret;
}

static vm_fault_t lrb_vm_fault(struct vm_fault *vmf)
{
	struct lrb_kbuf *kb = vmf->vma->vm_file->private_data;
	struct lrb_chan *chan = lrb_kb_chan(kb);
	unsigned int shift = chan->subbuf_order - PAGE_SHIFT;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	mutex_lock(&kb->map_lock);
	if (kb->map_valid && vmf->pgoff >> shift == kb->map_slot) {
		void *page = kb->sb.pages[vmf->pgoff & (BIT(shift) - 1)];

		ret = vmf_insert_page(vmf->vma, vmf->address,
				      virt_to_page(page));
	}
	mutex_unlock(&kb->map_lock);
	return ret;
}

static const struct vm_operations_struct lrb_vm_ops = {
	.fault = lrb_vm_fault,
};

/* The status page is inserted at mmap(): nothing to fault in. */
static const struct vm_operations_struct lrb_status_vm_ops = {};

static unsigned long lrb_kb_mmap_len(struct lrb_kbuf *kb)
{
	struct lrb_chan *chan = lrb_kb_chan(kb);

	return __lrb_nr_slots(chan) * chan->subbuf_size;
}

static int lrb_cpu_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct lrb_kbuf *kb = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;

	/* trace pages are never written nor run by user space */
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	if (vma->vm_pgoff == lrb_kb_mmap_len(kb) >> PAGE_SHIFT &&
	    len == PAGE_SIZE) {
		vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP,
			     VM_MAYWRITE | VM_MAYEXEC);
		vma->vm_ops = &lrb_status_vm_ops;
		return lrb_kb_status_mmap(kb, vma);
	}
	if (vma->vm_pgoff || len != lrb_kb_mmap_len(kb))
		return -EINVAL;
	vm_flags_mod(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP,
		     VM_MAYWRITE | VM_MAYEXEC);
	vma->vm_ops = &lrb_vm_ops;
	return 0;
}

static __poll_t lrb_cpu_poll(struct file *file, poll_table *wait)
{
	struct lrb_kbuf *kb = file->private_data;
	bool fin;

	poll_wait(file, &kb->buf->wait.wq, wait);
	lrb_kb_status_update(kb);
	fin = lrb_kchan_finalized(kb->kdev.kc);
	if (lrb_kb_ready(kb, fin ? 1 : READ_ONCE(kb->watermark)))
		return EPOLLIN | EPOLLRDNORM;
	if (fin && kb->kdev.kc->failed)
		return EPOLLERR | EPOLLHUP;
	return fin ? EPOLLHUP : 0;
}

static void lrb_kb_desc(struct lrb_kbuf *kb, struct lrb_subbuf_desc *d)
{
	/* a byte count, as GET_POSITIONS gives: positions wrap (1 GiB, 32-bit) */
	d->pos = kb->sb.seq << lrb_kb_chan(kb)->subbuf_order;
	d->seq = kb->sb.seq;
	d->content_size = kb->sb.content_size;
	d->packet_size = kb->sb.packet_size;
	d->mmap_offset = (u64)kb->sb.slot * lrb_kb_chan(kb)->subbuf_size;
}

/* Called with kb->lock held, the packet taken: hold it for the mapping. */
static void lrb_kb_hold_ioctl(struct lrb_kbuf *kb, struct lrb_subbuf_desc *d)
{
	lockdep_assert_held(&kb->lock);
	WRITE_ONCE(kb->by_ioctl, true);
	WRITE_ONCE(kb->holding, true);
	mutex_lock(&kb->map_lock);
	kb->map_slot = kb->sb.slot;
	kb->map_valid = true;
	mutex_unlock(&kb->map_lock);
	lrb_kb_desc(kb, d);
}

static long lrb_ioc_get_next(struct lrb_kbuf *kb, struct lrb_subbuf_desc *d)
{
	int ret;

	if (kb->holding)
		return -EBUSY;
	ret = lrb_kb_take(kb);
	if (!ret)
		lrb_kb_hold_ioctl(kb, d);
	return ret;
}

static long lrb_ioc_get(struct lrb_kbuf *kb, struct lrb_subbuf_desc *d)
{
	struct lrb_chan *chan = lrb_kb_chan(kb);
	int ret;

	if (d->seq || d->content_size || d->packet_size || d->mmap_offset ||
	    d->pos & (chan->subbuf_size - 1))
		return -EINVAL;
	if (kb->holding)
		return -EBUSY;
	ret = lrb_get_subbuf_at(kb->buf, d->pos, &kb->sb);
	if (!ret)
		lrb_kb_hold_ioctl(kb, d);
	return ret;
}

static void lrb_kb_info(struct lrb_kbuf *kb, struct lrb_buf_info *info)
{
	struct lrb_kchan *kc = kb->kdev.kc;

	info->subbuf_size = kc->chan->subbuf_size;
	info->num_subbuf = kc->chan->num_subbuf;
	info->mmap_len = lrb_kb_mmap_len(kb);
	info->cpu = kb->cpu;
	info->mode = kc->cfg.mode == LRB_MODE_OVERWRITE ?
			     LRB_ABI_MODE_OVERWRITE : LRB_ABI_MODE_DISCARD;
	info->stream_id = kc->chan->stream_id;
	info->watermark = kb->watermark;
	info->switch_timer_us = kc->switch_timer_us;
	info->read_timer_us = kc->read_timer_us;
	info->header = kc->cfg.header == LRB_HEADER_LARGE ?
			       LRB_ABI_HEADER_LARGE : LRB_ABI_HEADER_COMPACT;
	info->tsc_bits = kc->cfg.tsc_bits;
	info->clock_freq = kc->clock_freq;
}

/**
 * lrb_kbuf_counters() - a buffer's counters, as the user ABI has them
 * @kb: the buffer
 * @c: receives them
 */
void lrb_kbuf_counters(struct lrb_kbuf *kb, struct lrb_buf_counters *c)
{
	lrb_buf_stats(kb->buf, c);
	c->packets_read = atomic64_read(&kb->packets_read);
	c->bytes_read = atomic64_read(&kb->bytes_read);
	c->pages_spliced = atomic64_read(&kb->pages_spliced);
}

/* Commands without an argument, under kb->lock. */
static long lrb_ioc_noarg(struct lrb_kbuf *kb, unsigned int cmd)
{
	switch (cmd) {
	case LRB_IOC_PUT_SUBBUF:
		if (!kb->holding || !kb->by_ioctl)
			return -EINVAL;
		if (kb->sb.consuming) {
			atomic64_inc(&kb->packets_read);
			atomic64_add(kb->sb.packet_size, &kb->bytes_read);
		}
		lrb_kb_release(kb);
		return 0;
	case LRB_IOC_FLUSH:
		if (lrb_kchan_finalized(kb->kdev.kc))
			return -ENODEV;
		lrb_buf_flush(kb->buf);
		return 0;
	}
	return -ENOTTY;
}

/* Commands that return a struct, filled in @out under kb->lock. */
static long lrb_ioc_out(struct lrb_kbuf *kb, unsigned int cmd, void *out)
{
	struct lrb_positions *p = out;
	struct lrb_buf_counters c;

	switch (cmd) {
	case LRB_IOC_GET_INFO:
		lrb_kb_info(kb, out);
		return 0;
	case LRB_IOC_GET_NEXT_SUBBUF:
		return lrb_ioc_get_next(kb, out);
	case LRB_IOC_GET_SUBBUF:
		return lrb_ioc_get(kb, out);
	case LRB_IOC_GET_HELD:
		if (!kb->holding || !kb->by_ioctl)
			return -EINVAL;
		lrb_kb_desc(kb, out);
		return 0;
	case LRB_IOC_GET_POSITIONS:
		/* the counts, which unlike positions do not wrap */
		lrb_buf_stats(kb->buf, &c);
		p->consumed = c.consumed;
		p->produced = c.produced;
		return 0;
	case LRB_IOC_GET_COUNTERS:
		lrb_kbuf_counters(kb, out);
		return 0;
	}
	return -ENOTTY;
}

static long lrb_cpu_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct lrb_kbuf *kb = file->private_data;
	void __user *uarg = (void __user *)arg;
	union {
		struct lrb_buf_info info;
		struct lrb_subbuf_desc desc;
		struct lrb_positions pos;
		struct lrb_buf_counters counters;
	} u = {};
	u32 watermark;
	long ret;

	switch (cmd) {
	case LRB_IOC_PUT_SUBBUF:
	case LRB_IOC_FLUSH:
		if (arg)
			return -EINVAL;
		if (mutex_lock_interruptible(&kb->lock))
			return -ERESTARTSYS;
		ret = lrb_ioc_noarg(kb, cmd);
		mutex_unlock(&kb->lock);
		lrb_kb_status_update(kb);
		return ret;
	case LRB_IOC_SET_WATERMARK:
		if (get_user(watermark, (u32 __user *)uarg))
			return -EFAULT;
		if (!watermark || watermark > lrb_kb_chan(kb)->num_subbuf)
			return -EINVAL;
		WRITE_ONCE(kb->watermark, watermark);
		/* a sleeping poll() may now be satisfied */
		wake_up_interruptible(&kb->buf->wait.wq);
		return 0;
	case LRB_IOC_GET_SUBBUF:
		if (copy_from_user(&u.desc, uarg, sizeof(u.desc)))
			return -EFAULT;
		break;
	case LRB_IOC_GET_NEXT_SUBBUF:
		/* fail before consuming a packet the caller could not learn of */
		if (clear_user(uarg, _IOC_SIZE(cmd)))
			return -EFAULT;
		break;
	case LRB_IOC_GET_INFO:
	case LRB_IOC_GET_HELD:
	case LRB_IOC_GET_POSITIONS:
	case LRB_IOC_GET_COUNTERS:
		break;
	default:
		return -ENOTTY;
	}
	if (mutex_lock_interruptible(&kb->lock))
		return -ERESTARTSYS;
	ret = lrb_ioc_out(kb, cmd, &u);
	if (!ret && copy_to_user(uarg, &u, _IOC_SIZE(cmd))) {
		/* a snapshot goes back untouched; see also clear_user() above */
		if (cmd == LRB_IOC_GET_SUBBUF)
			lrb_kb_release(kb);
		ret = -EFAULT;
	}
	mutex_unlock(&kb->lock);
	lrb_kb_status_update(kb);
	return ret;
}

const struct file_operations lrb_cpu_fops = {
	.owner = THIS_MODULE,
	.open = lrb_cpu_open,
	.release = lrb_cpu_release,
	.read = lrb_cpu_read,
	.splice_read = lrb_cpu_splice_read,
	.mmap = lrb_cpu_mmap,
	.poll = lrb_cpu_poll,
	.unlocked_ioctl = lrb_cpu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};
