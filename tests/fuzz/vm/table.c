// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: a worker's table of open files, readers and mappings, from
 * which each operation picks its target at random.
 */
#include "fuzz.h"

#include <string.h>
#include <sys/ioctl.h>

/* One of the open files, at random; NULL if none is. */
struct fz_file *fz_any_file(struct fz_worker *w)
{
	unsigned int i, n = 0, k;

	for (i = 0; i < FZ_MAX_FDS; i++)
		n += w->files[i].fd >= 0;
	k = fz_below(w, n);
	for (i = 0; i < FZ_MAX_FDS; i++)
		if (w->files[i].fd >= 0 && !k--)
			return &w->files[i];
	return NULL;
}

/* The open metadata and stats files. */
unsigned int fz_chan_files(const struct fz_worker *w)
{
	unsigned int i, n = 0;

	for (i = 0; i < FZ_MAX_FDS; i++)
		n += w->files[i].fd >= 0 && w->files[i].kind != FZ_CPU;
	return n;
}

struct fz_file *fz_free_file(struct fz_worker *w)
{
	unsigned int i;

	for (i = 0; i < FZ_MAX_FDS; i++)
		if (w->files[i].fd < 0)
			return &w->files[i];
	return NULL;
}

/*
 * One of the mappings, at random. A mapping keeps its reader, and so the
 * cpu file, busy for the other workers: they go as often as they come.
 */
struct fz_map *fz_any_map(struct fz_worker *w)
{
	unsigned int i, n = 0, k;

	for (i = 0; i < FZ_MAX_MAPS; i++)
		n += !!w->maps[i].addr;
	k = fz_below(w, n);
	for (i = 0; i < FZ_MAX_MAPS; i++)
		if (w->maps[i].addr && !k--)
			return &w->maps[i];
	return NULL;
}

struct fz_map *fz_free_map(struct fz_worker *w)
{
	unsigned int i;

	for (i = 0; i < FZ_MAX_MAPS; i++)
		if (!w->maps[i].addr)
			return &w->maps[i];
	return NULL;
}

/* A new reader of cpu @cpu, opened as @fd: -1 if its GET_INFO fails. */
int fz_new_reader(struct fz_worker *w, u32 cpu, int fd)
{
	struct lrb_buf_info *info;
	struct fz_reader *r;
	u64 slots;
	int i;

	for (i = 0; i < FZ_MAX_READERS; i++)
		if (!w->readers[i].refs)
			break;
	/* there are more reader slots than descriptors and mappings */
	r = &w->readers[i];
	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	info = &r->info;
	if (ioctl(fd, LRB_IOC_GET_INFO, info)) {
		fz_finding(w, "GET_INFO on a new reader: %s", strerror(errno));
		return -1;
	}
	slots = info->num_subbuf + (info->mode == LRB_ABI_MODE_OVERWRITE);
	if (info->cpu != cpu || info->watermark != 1 ||
	    info->subbuf_size < FZ_PAGE ||
	    (info->subbuf_size & (info->subbuf_size - 1)) ||
	    info->mmap_len != slots * info->subbuf_size)
		fz_finding(w, "GET_INFO of a new reader of cpu%u: cpu %u watermark %u subbuf_size %llu num_subbuf %llu mode %u mmap_len %llu",
			   cpu, info->cpu, info->watermark,
			   (ull)info->subbuf_size, (ull)info->num_subbuf,
			   info->mode, (ull)info->mmap_len);
	r->watermark = 1;
	r->refs = 1;
	return i;
}

void fz_put_reader(struct fz_worker *w, int r)
{
	w->readers[r].refs--;
}
