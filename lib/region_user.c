// SPDX-License-Identifier: GPL-2.0
/*
 * liblrb only: persistent channels in files. A channel laid out in a file
 * mapped MAP_SHARED outlives its process: when the process dies (SIGKILL,
 * abort, a segfault), the kernel's page cache keeps every store it made,
 * and the next process recovers the file with lrb_region_file_recover().
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <lrb/region_file.h>
#include "port.h"

/**
 * lrb_region_file_create() - create a persistent channel in a file
 * @path: the file; created, or truncated and laid out afresh (recover its
 *	previous run first)
 * @cfg: a persistent overwrite configuration
 * @attr: the channel's attributes; its region fields are set here
 * @chanp: receives the channel, to destroy with lrb_region_file_destroy()
 *
 * Return: 0, -EINVAL as lrb_channel_create(), or the -errno of the file
 * operation that failed.
 */
int lrb_region_file_create(const char *path, const struct lrb_config *cfg,
			   struct lrb_chan_attr *attr, struct lrb_chan **chanp)
{
	u64 size = lrb_region_size(cfg, attr);
	void *base;
	int fd, ret;

	if (!size || size != (size_t)size)
		return -EINVAL;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, 0) || ftruncate(fd, (off_t)size)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ret = base == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	attr->region = base;
	attr->region_size = size;
	ret = lrb_channel_create(cfg, attr, chanp);
	if (ret)
		munmap(base, size);
	return ret;
}

/**
 * lrb_region_file_destroy() - destroy a channel made by
 *	lrb_region_file_create() and unmap its file
 * @chan: the channel
 *
 * The file keeps the channel's last state, recoverable.
 */
void lrb_region_file_destroy(struct lrb_chan *chan)
{
	void *base = chan->region;
	size_t size = ((struct lrb_region_header *)base)->region_size;

	lrb_channel_destroy(chan);
	munmap(base, size);
}

/**
 * lrb_region_file_recover() - recover the channel a file holds
 * @path: the file
 * @dec: decoder of the channel's records, see lrb_region_recover()
 * @recp: receives the recovery; free it with lrb_region_file_release()
 * @why: receives, on -ENODATA, why the file holds nothing to recover
 *
 * The file is mapped read-only: recovery never changes it.
 *
 * Return: as lrb_region_recover(), or the -errno of the file operation
 * that failed (*@why then names it).
 */
int lrb_region_file_recover(const char *path, const struct lrb_decoder *dec,
			    struct lrb_recovery **recp, const char **why)
{
	struct stat st;
	void *base;
	int fd, ret;

	*recp = NULL;
	*why = "cannot open the file";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!st.st_size) {
		close(fd);
		*why = "empty file";
		return -ENODATA;
	}
	base = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	ret = base == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret) {
		*why = "cannot map the file";
		return ret;
	}
	ret = lrb_region_recover(base, st.st_size, dec, recp, why);
	if (ret)
		munmap(base, st.st_size);
	else
		(*recp)->map_size = st.st_size;
	return ret;
}

/**
 * lrb_region_file_release() - free a recovery of a file and unmap it
 * @rec: from lrb_region_file_recover(), or NULL
 */
void lrb_region_file_release(struct lrb_recovery *rec)
{
	if (!rec)
		return;
	munmap((void *)rec->base, rec->map_size);
	lrb_recovery_free(rec);
}
