// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: a worker's table of open files, readers and mappings, from
 * which each operation picks its target at random.
 */
#include "fuzz.h"

#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * One of the open files, at random; NULL if none is. A cpu file 7 times
 * in 8 if there is one: the channel files take few calls.
 */
struct fz_file *fz_any_file(struct fz_worker *w)
{
	bool cpu_only = !fz_one_in(w, 8);
	unsigned int i, n = 0, k;

	for (i = 0; i < FZ_MAX_FDS; i++)
		n += w->files[i].fd >= 0 && w->files[i].kind == FZ_CPU;
	if (!n)
		cpu_only = false;
	for (i = 0; i < FZ_MAX_FDS && !cpu_only; i++)
		n += w->files[i].fd >= 0 && w->files[i].kind != FZ_CPU;
	k = fz_below(w, n);
	for (i = 0; i < FZ_MAX_FDS; i++)
		if (w->files[i].fd >= 0 &&
		    (!cpu_only || w->files[i].kind == FZ_CPU) && !k--)
			return &w->files[i];
	return NULL;
}

/* An open descriptor of reader @r, or NULL. */
struct fz_file *fz_reader_file(struct fz_worker *w, int r)
{
	unsigned int i;

	for (i = 0; i < FZ_MAX_FDS; i++)
		if (w->files[i].fd >= 0 && w->files[i].kind == FZ_CPU &&
		    w->files[i].reader == r)
			return &w->files[i];
	return NULL;
}

/*
 * The CPUs whose files this worker opens: its share of them (cpu i goes
 * to worker i modulo the workers), so that most opens find the file free.
 * With fewer CPUs than workers, some share one.
 */
bool fz_own_cpu(const struct fz_worker *w, u32 cpu)
{
	if (w->nr_cpus <= w->nr_workers)
		return cpu == w->id % w->nr_cpus;
	return cpu % w->nr_workers == (u32)w->id;
}

/* Does this worker hold a reader of @cpu (by a descriptor or a mapping)? */
bool fz_cpu_in_use(const struct fz_worker *w, u32 cpu)
{
	unsigned int i;

	for (i = 0; i < FZ_MAX_READERS; i++)
		if (w->readers[i].refs && w->readers[i].cpu == cpu)
			return true;
	return false;
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

void fz_close_file(struct fz_worker *w, struct fz_file *f)
{
	fz_begin(w, FZ_CLOSE, "close(%s)", f->path);
	if (close(f->fd))
		fz_errno_ok(w, FZ_CLOSE, errno, FZ_ERRS(-1));
	if (f->kind == FZ_CPU)
		fz_put_reader(w, f->reader);
	f->fd = -1;
}

void fz_unmap(struct fz_worker *w, struct fz_map *m)
{
	fz_begin(w, FZ_MUNMAP, "munmap(%p, %llu)", m->addr, (ull)m->len);
	if (munmap(m->addr, m->len))
		fz_errno_ok(w, FZ_MUNMAP, errno, FZ_ERRS(-1));
	fz_put_reader(w, m->reader);
	m->addr = NULL;
}

/*
 * A reader to put away soon: one that reached the end of a destroyed
 * channel (drained: the worker moves on to the channel that replaced
 * it), or one of another worker's CPUs (opened to race that worker's
 * opens and closes, not to keep it from its files).
 */
static bool fz_stale(const struct fz_worker *w, int r)
{
	return w->readers[r].ended || !fz_own_cpu(w, w->readers[r].cpu);
}

/* Close a descriptor or a mapping of a stale reader; false if none. */
bool fz_put_away(struct fz_worker *w)
{
	unsigned int i;

	for (i = 0; i < FZ_MAX_MAPS; i++) {
		if (w->maps[i].addr && fz_stale(w, w->maps[i].reader)) {
			fz_unmap(w, &w->maps[i]);
			return true;
		}
	}
	for (i = 0; i < FZ_MAX_FDS; i++) {
		if (w->files[i].fd >= 0 && w->files[i].kind == FZ_CPU &&
		    fz_stale(w, w->files[i].reader)) {
			fz_close_file(w, &w->files[i]);
			return true;
		}
	}
	return false;
}
