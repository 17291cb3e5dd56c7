/* SPDX-License-Identifier: GPL-2.0 */
/* lrb backend: buffer memory, shared by the frontend and the reader. */
#ifndef _LRB_LIB_BACKEND_H
#define _LRB_LIB_BACKEND_H

#include <lrb/internal/buffer.h>

struct lrb_buf *lrb_buf_alloc(struct lrb_chan *chan, unsigned int cpu);
void lrb_buf_free(struct lrb_buf *buf);
void lrb_pages_copy_out(void *const *pages, unsigned long offset, void *dst,
			unsigned long len);
void lrb_pages_fill(void *const *pages, unsigned long offset, const void *src,
		    unsigned long len);

#endif /* _LRB_LIB_BACKEND_H */
