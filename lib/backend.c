// SPDX-License-Identifier: GPL-2.0
/*
 * lrb backend: the memory of a buffer. Each sub-buffer is a set of pages
 * allocated one by one on the buffer's NUMA node, so no allocation on the
 * data path is larger than a page. Overwrite mode adds one spare set of
 * pages that the reader swaps with the sub-buffer it takes.
 */
#include <lrb/lrb.h>
#include "backend.h"
#include "port.h"

/**
 * lrb_buf_alloc() - allocate and initialise one buffer of a channel
 * @chan: the channel, its geometry filled in
 * @cpu: CPU the buffer belongs to
 *
 * Return: the buffer, or NULL with everything unwound if memory ran out.
 */
struct lrb_buf *lrb_buf_alloc(struct lrb_chan *chan, unsigned int cpu)
{
	unsigned long nr_pages = __lrb_nr_slots(chan) * chan->pages_per_subbuf;
	int node = __lrb_port_cpu_node(cpu);
	struct lrb_buf *buf;
	unsigned long i;

	buf = __lrb_port_zalloc(sizeof(*buf), node);
	if (!buf)
		return NULL;
	buf->chan = chan;
	buf->cpu = cpu;
	__lrb_port_wait_init(buf);
	buf->records = __lrb_port_zalloc(2 * chan->num_subbuf *
					 sizeof(*buf->records), node);
	buf->skips = __lrb_port_zalloc(chan->num_subbuf * sizeof(*buf->skips),
				       node);
	buf->pages = __lrb_port_zalloc(nr_pages * sizeof(*buf->pages), node);
	if (!buf->records || !buf->skips || !buf->pages)
		goto fail;
	if (chan->region) {
		lrb_region_buf_attach(buf);
	} else {
		buf->commit = __lrb_port_zalloc(chan->num_subbuf *
						sizeof(*buf->commit), node);
		if (!buf->commit)
			goto fail;
	}
	if (chan->cfg->mode == LRB_MODE_OVERWRITE) {
		buf->records_base = __lrb_port_zalloc(2 * chan->num_subbuf *
						      sizeof(*buf->records_base),
						      node);
		if (!buf->records_base)
			goto fail;
		if (!chan->region)
			buf->wsb = __lrb_port_zalloc(chan->num_subbuf *
						     sizeof(*buf->wsb), node);
		if (!buf->wsb)
			goto fail;
		/* sub-buffer i starts in slot i, in lap 0, not delivered */
		for (i = 0; i < chan->num_subbuf; i++)
			__lrb_atomic_set(&buf->wsb[i], i);
		buf->spare = chan->num_subbuf;
	}
	for (i = 0; i < nr_pages && !chan->region; i++) {
		buf->pages[i] = __lrb_port_alloc_page(node);
		if (!buf->pages[i])
			goto fail;
	}
	return buf;

fail:
	lrb_buf_free(buf);
	return NULL;
}

/**
 * lrb_buf_free() - free a buffer and all its pages
 * @buf: buffer from lrb_buf_alloc(), possibly partly allocated
 */
void lrb_buf_free(struct lrb_buf *buf)
{
	unsigned long i, nr_pages;

	/* a persistent channel's state and pages are the region's */
	if (buf->pages && !buf->chan->region) {
		nr_pages = __lrb_nr_slots(buf->chan) * buf->chan->pages_per_subbuf;
		for (i = 0; i < nr_pages && buf->pages[i]; i++)
			__lrb_port_free_page(buf->pages[i]);
	}
	__lrb_port_free(buf->pages);
	__lrb_port_free(buf->records_base);
	__lrb_port_free(buf->skips);
	__lrb_port_free(buf->records);
	if (!buf->chan->region) {
		__lrb_port_free(buf->wsb);
		__lrb_port_free(buf->commit);
	}
	__lrb_port_wait_fini(buf);
	__lrb_port_free(buf);
}

/**
 * lrb_pages_copy_out() - copy bytes out of a sub-buffer's pages
 * @pages: pages of the sub-buffer
 * @offset: first byte within the sub-buffer
 * @dst: destination
 * @len: bytes; @offset + @len must not exceed the sub-buffer size
 */
void lrb_pages_copy_out(void *const *pages, unsigned long offset, void *dst,
			unsigned long len)
{
	while (len) {
		unsigned long in_page = offset & (PAGE_SIZE - 1);
		unsigned long n = PAGE_SIZE - in_page;

		if (n > len)
			n = len;
		memcpy(dst, (char *)pages[offset >> LRB_PAGE_SHIFT] + in_page, n);
		dst = (char *)dst + n;
		offset += n;
		len -= n;
	}
}

/**
 * lrb_pages_fill() - copy bytes into, or zero, a range of a sub-buffer
 * @pages: pages of the sub-buffer
 * @offset: first byte within the sub-buffer
 * @src: bytes to copy, or NULL to zero the range
 * @len: bytes
 */
void lrb_pages_fill(void *const *pages, unsigned long offset, const void *src,
		    unsigned long len)
{
	while (len) {
		unsigned long in_page = offset & (PAGE_SIZE - 1);
		unsigned long n = PAGE_SIZE - in_page;
		char *dst = (char *)pages[offset >> LRB_PAGE_SHIFT] + in_page;

		if (n > len)
			n = len;
		if (src) {
			memcpy(dst, src, n);
			src = (const char *)src + n;
		} else {
			memset(dst, 0, n);
		}
		offset += n;
		len -= n;
	}
}
