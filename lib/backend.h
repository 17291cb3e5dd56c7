/* SPDX-License-Identifier: GPL-2.0 */
/* lrb backend: buffer memory, shared by the frontend and the reader. */
#ifndef _LRB_LIB_BACKEND_H
#define _LRB_LIB_BACKEND_H

#include <lrb/internal/buffer.h>
#include <uapi/lrb/lrb_region.h>

struct lrb_buf *lrb_buf_alloc(struct lrb_chan *chan, unsigned int cpu);
void lrb_buf_free(struct lrb_buf *buf);
void lrb_pages_copy_out(void *const *pages, unsigned long offset, void *dst,
			unsigned long len);
void lrb_pages_fill(void *const *pages, unsigned long offset, const void *src,
		    unsigned long len);

/* Persistent channels (region.c). */
int lrb_region_format(struct lrb_chan *chan, const struct lrb_chan_attr *attr);
void lrb_region_buf_attach(struct lrb_buf *buf);

/*
 * Count a loss in the region too: before the buffer's counter, which
 * packet headers sample, so the region's count is never the lower.
 */
static inline void lrb_region_count_lost(struct lrb_buf *buf, unsigned int i)
{
	if (buf->region_lost)
		__lrb_v_inc(__lrb_per_cpu(buf->chan->cfg), &buf->region_lost[i]);
}

#endif /* _LRB_LIB_BACKEND_H */
