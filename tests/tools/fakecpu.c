// SPDX-License-Identifier: GPL-2.0
/*
 * fakecpu.so: lrb.ko's cpu files without lrb.ko, for the host tests of
 * lrb-record (tests/tools/test-record.sh, test-relayd.sh). Preloaded
 * (LD_PRELOAD) into the tools as built, it answers lrb's ioctls on a
 * regular file as lrb.ko answers them on the cpu file of a destroyed
 * channel whose buffer still holds the file's bytes: read() and splice()
 * take them up to the end of the file (0 then, as for a destroyed
 * channel), LRB_IOC_GET_NEXT_SUBBUF hands out the packet at the file
 * offset and LRB_IOC_PUT_SUBBUF moves the offset past it (ENODEV at the
 * end), LRB_IOC_FLUSH fails with ENODEV, LRB_IOC_GET_POSITIONS gives the
 * offset as consumed and the file size as produced. So a test writes the
 * packets, well formed or not, that a cpu file is to deliver, and runs
 * the real lrb-record on them. Every other ioctl, and lrb's on anything
 * but a regular file, go to the C library.
 *
 *   LRB_FAKECPU_SUBBUF=N     subbuf_size in LRB_IOC_GET_INFO (default 4096;
 *                            write packets of that size, page aligned, so
 *                            that read() and splice() end on packets)
 *   LRB_FAKECPU_TEE_FAIL=N   the Nth tee() of the process, and every one
 *                            after it, fails with ENOMEM
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uapi/lrb/lrb_abi.h>

#define FAKE_MAX_FD 4096
#define FAKE_PAGE 4096ULL

/* Per descriptor: the size of the packet GET_NEXT_SUBBUF handed out. */
static __u64 held[FAKE_MAX_FD];
static unsigned long tees;

static __u64 fake_env(const char *name, __u64 def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

static __u64 fake_subbuf(void)
{
	return fake_env("LRB_FAKECPU_SUBBUF", 4096);
}

/*
 * The packet at @off of a file of @size bytes: its header's size if that
 * fits what is left, else what lrb.ko would never give, the rest of the
 * file up to a sub-buffer.
 */
static __u64 fake_packet(int fd, __u64 off, __u64 size)
{
	struct lrb_packet_header h;
	__u64 left = size - off, n;

	if (pread(fd, &h, sizeof(h), off) == sizeof(h)) {
		n = h.packet_size / 8;
		if (n && n <= left)
			return n;
	}
	n = fake_subbuf();
	return n < left ? n : left;
}

static int fake_ioctl(int fd, unsigned long req, void *arg, struct stat *st)
{
	__u64 size = st->st_size, off = lseek(fd, 0, SEEK_CUR), sb = fake_subbuf();
	struct lrb_buf_counters *k = arg;
	struct lrb_positions *p = arg;
	struct lrb_subbuf_desc *d = arg;
	struct lrb_buf_info *info = arg;

	switch (req) {
	case LRB_IOC_GET_INFO:
		memset(info, 0, sizeof(*info));
		info->subbuf_size = sb;
		info->num_subbuf = 4;
		info->mmap_len = (size + FAKE_PAGE - 1) & ~(FAKE_PAGE - 1);
		if (!info->mmap_len)
			info->mmap_len = FAKE_PAGE;
		info->mode = LRB_ABI_MODE_DISCARD;
		info->header = LRB_ABI_HEADER_COMPACT;
		info->tsc_bits = 27;
		info->clock_freq = 1000000000ULL;
		return 0;
	case LRB_IOC_GET_COUNTERS:
		memset(k, 0, sizeof(*k));
		k->produced = size;
		k->consumed = off;
		k->bytes_read = off;
		k->packets_read = off / sb;
		return 0;
	case LRB_IOC_GET_POSITIONS:
		p->consumed = off;
		p->produced = size;
		return 0;
	case LRB_IOC_SET_WATERMARK:
		return 0;
	case LRB_IOC_FLUSH:
		errno = ENODEV;
		return -1;
	case LRB_IOC_GET_NEXT_SUBBUF:
	case LRB_IOC_GET_SUBBUF:
		if (req == LRB_IOC_GET_SUBBUF)
			off = d->pos;
		if (off >= size) {
			errno = req == LRB_IOC_GET_SUBBUF ? ENODATA : ENODEV;
			return -1;
		}
		if (fd < FAKE_MAX_FD)
			held[fd] = fake_packet(fd, off, size);
		d->pos = off;
		d->seq = off / sb;
		d->packet_size = fd < FAKE_MAX_FD ? held[fd] : 0;
		d->content_size = d->packet_size;
		d->mmap_offset = off;
		if (req == LRB_IOC_GET_SUBBUF && fd < FAKE_MAX_FD)
			held[fd] = 0;
		return 0;
	case LRB_IOC_PUT_SUBBUF:
		if (fd < FAKE_MAX_FD && held[fd]) {
			lseek(fd, off + held[fd], SEEK_SET);
			held[fd] = 0;
		}
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int fd, unsigned long req, ...);
	struct stat st;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) == LRB_IOC_MAGIC && !fstat(fd, &st) &&
	    S_ISREG(st.st_mode))
		return fake_ioctl(fd, req, arg, &st);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT,
							       "ioctl");
	return real(fd, req, arg);
}

ssize_t tee(int in, int out, size_t len, unsigned int flags)
{
	static ssize_t (*real)(int in, int out, size_t len, unsigned int flags);
	__u64 fail = fake_env("LRB_FAKECPU_TEE_FAIL", 0);

	if (fail && __atomic_add_fetch(&tees, 1, __ATOMIC_RELAXED) >= fail) {
		errno = ENOMEM;
		return -1;
	}
	if (!real)
		real = (ssize_t (*)(int, int, size_t, unsigned int))
		       dlsym(RTLD_NEXT, "tee");
	return real(in, out, len, flags);
}
