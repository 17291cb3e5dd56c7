// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-record --snapshot: the current contents of a flight recorder, taken
 * once without consuming anything and without stopping the writers
 * (Documentation/abi.rst, LRB_IOC_GET_SUBBUF). Each packet still in the
 * ring is held while it is copied, so it cannot change meanwhile; packets
 * overwritten or still open by the time they are asked for are skipped.
 */
#include "record.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

void rec_snapshot_cpu(struct rec_cpu *c)
{
	__u64 sb = c->info.subbuf_size, ring = sb * c->info.num_subbuf;
	struct lrb_positions p;
	__u64 head, pos;
	const unsigned char *map;

	c->t_start = tool_now_ns();
	map = mmap(NULL, c->info.mmap_len, PROT_READ, MAP_SHARED, c->fd, 0);
	if (map == MAP_FAILED) {
		tool_err("cpu%u: mmap of %llu bytes: %s", c->cpu,
			 (unsigned long long)c->info.mmap_len, strerror(errno));
		c->failed = true;
		goto out;
	}
	/* the packet being filled joins the snapshot; destroyed: ENODEV */
	if (ioctl(c->fd, LRB_IOC_FLUSH, 0) && errno != ENODEV)
		tool_err("cpu%u: LRB_IOC_FLUSH: %s: the packet being filled is not in the snapshot",
			 c->cpu, strerror(errno));
	if (ioctl(c->fd, LRB_IOC_GET_POSITIONS, &p)) {
		tool_err("cpu%u: LRB_IOC_GET_POSITIONS: %s", c->cpu,
			 strerror(errno));
		c->failed = true;
		goto unmap;
	}
	c->pos0 = p;
	/* the ring holds at most the num_subbuf packets before the head */
	head = p.produced & ~(sb - 1);
	pos = head > ring ? head - ring : 0;
	if (pos < p.consumed)
		pos = p.consumed;
	for (; pos < p.produced; pos += sb) {
		struct lrb_subbuf_desc d = { .pos = pos };
		struct lrb_packet_header h;
		int bad;

		if (ioctl(c->fd, LRB_IOC_GET_SUBBUF, &d)) {
			if (errno == EAGAIN || errno == ENODATA) {
				c->skipped++;
				continue;
			}
			tool_err("cpu%u: LRB_IOC_GET_SUBBUF(pos %llu): %s",
				 c->cpu, (unsigned long long)pos,
				 strerror(errno));
			c->failed = true;
			break;
		}
		bad = d.mmap_offset > c->info.mmap_len ||
		      d.packet_size < sizeof(h) ||
		      d.packet_size > c->info.mmap_len - d.mmap_offset;
		if (bad) {
			tool_err("cpu%u: LRB_IOC_GET_SUBBUF(pos %llu) gave packet_size %llu at mmap_offset %llu, outside the mapping: lrb.ko and these tools disagree on the ABI",
				 c->cpu, (unsigned long long)pos,
				 (unsigned long long)d.packet_size,
				 (unsigned long long)d.mmap_offset);
		} else {
			memcpy(&h, map + d.mmap_offset, sizeof(h));
			rec_packet_header(c, &h);
			if (c->r->relayd) {
				bad = rec_relayd_write(c, map + d.mmap_offset,
						       d.packet_size);
			} else if (tool_write_full(c->out,
						   map + d.mmap_offset,
						   d.packet_size)) {
				tool_err("cpu%u: writing the snapshot to %s: %s",
					 c->cpu, c->name, strerror(errno));
				bad = 1;
			}
			if (!bad) {
				c->bytes += d.packet_size;
				c->packets++;
			}
		}
		if (ioctl(c->fd, LRB_IOC_PUT_SUBBUF, 0)) {
			tool_err("cpu%u: LRB_IOC_PUT_SUBBUF(pos %llu): %s",
				 c->cpu, (unsigned long long)pos,
				 strerror(errno));
			bad = 1;
		}
		if (bad) {
			c->failed = true;
			break;
		}
	}
unmap:
	munmap((void *)map, c->info.mmap_len);
out:
	if (ioctl(c->fd, LRB_IOC_GET_COUNTERS, &c->c1))
		tool_err("cpu%u: LRB_IOC_GET_COUNTERS: %s", c->cpu,
			 strerror(errno));
	c->t_end = tool_now_ns();
}
