// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: mmap(), munmap(), mprotect() and reads of mapped pages. Only
 * the sub-buffer held through the ioctls is readable; any other page of
 * the mapping raises SIGBUS (Documentation/abi.rst, "mmap() and the
 * ioctls"), which the touch catches.
 */
#include "fuzz.h"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>

static sigjmp_buf fz_jb;
static volatile int fz_sig;

static void fz_probe_handler(int sig)
{
	fz_sig = sig;
	siglongjmp(fz_jb, 1);
}

/* Read the byte at @p: 0 if readable (in *@val), else the signal. */
static int fz_probe(const volatile char *p, char *val)
{
	struct sigaction sa = { .sa_handler = fz_probe_handler }, obus, osegv;
	int ret = 0;

	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	if (sigsetjmp(fz_jb, 1))
		ret = fz_sig;
	else
		*val = *p;
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	return ret;
}

void fz_op_mmap(struct fz_worker *w)
{
	struct fz_file *f = fz_any_file(w);
	struct fz_map *m = fz_free_map(w);
	struct fz_reader *r;
	u64 len, off = fz_one_in(w, 16) ? FZ_PAGE : 0, want;
	/* writable or executable 1 time in 8: both refused */
	int prot = fz_one_in(w, 8) ? PROT_READ | (fz_one_in(w, 2) ? PROT_WRITE :
								   PROT_EXEC) :
				     PROT_READ;
	int flags = fz_one_in(w, 4) ? MAP_PRIVATE : MAP_SHARED;
	char *a;

	if (!f || !m)
		return fz_op_munmap(w);
	want = f->kind == FZ_CPU ? w->readers[f->reader].info.mmap_len : FZ_PAGE;
	/* the length of the buffer 3 times in 4 */
	switch (fz_below(w, 16)) {
	case 0:
		len = want - FZ_PAGE;
		break;
	case 1:
		len = want + FZ_PAGE;
		break;
	case 2:
	case 3:
		len = want - fz_below(w, FZ_PAGE);	/* rounds up to want */
		break;
	case 4:
		len = fz_below(w, 4 * want + 1);
		break;
	default:
		len = want;
	}
	fz_begin(w, FZ_MMAP, "mmap(%llu bytes, %s, %s, %s, offset %llu)",
		 (ull)len, prot & PROT_WRITE ? "PROT_READ|PROT_WRITE" :
		 prot & PROT_EXEC ? "PROT_READ|PROT_EXEC" : "PROT_READ",
		 flags == MAP_SHARED ? "MAP_SHARED" : "MAP_PRIVATE", f->path,
		 (ull)off);
	fz_refuse(w, f->kind != FZ_CPU || (prot & (PROT_WRITE | PROT_EXEC)) ||
		  off ||
		  ((len + FZ_PAGE - 1) & ~(FZ_PAGE - 1)) != want);
	a = mmap(NULL, len, prot, flags, f->fd, off);
	if (f->kind != FZ_CPU) {
		if (a != MAP_FAILED) {
			fz_finding(w, "mapped a file without mmap");
			munmap(a, len);
		} else {
			fz_errno_ok(w, FZ_MMAP, errno,
				    FZ_ERRS(ENODEV, EACCES, EINVAL));
		}
		return;
	}
	/* the kernel rounds the length up to a page */
	len = (len + FZ_PAGE - 1) & ~(FZ_PAGE - 1);
	if (a == MAP_FAILED) {
		if (!len)
			fz_errno_ok(w, FZ_MMAP, errno, FZ_ERRS(EINVAL));
		else if (prot & PROT_WRITE)
			fz_errno_ok(w, FZ_MMAP, errno,
				    flags == MAP_SHARED ? FZ_ERRS(EACCES) :
							  FZ_ERRS(EPERM));
		else if (prot & PROT_EXEC)
			fz_errno_ok(w, FZ_MMAP, errno, FZ_ERRS(EPERM));
		else if (len != want || off)
			fz_errno_ok(w, FZ_MMAP, errno, FZ_ERRS(EINVAL));
		else
			fz_errno_ok(w, FZ_MMAP, errno, FZ_ERRS(ENOMEM));
		return;
	}
	if ((prot & (PROT_WRITE | PROT_EXEC)) || len != want || off) {
		fz_finding(w, "succeeded: the ABI refuses it");
		munmap(a, len);
		return;
	}
	r = &w->readers[f->reader];
	r->refs++;
	m->addr = a;
	m->len = len;
	m->reader = f->reader;
}

void fz_op_munmap(struct fz_worker *w)
{
	struct fz_map *m = fz_any_map(w);

	if (m)
		fz_unmap(w, m);
}

void fz_op_mprotect(struct fz_worker *w)
{
	struct fz_map *m = fz_any_map(w);
	int prot = PROT_READ | (fz_one_in(w, 2) ? PROT_WRITE : PROT_EXEC);

	if (!m)
		return;
	fz_begin(w, FZ_MPROTECT, "mprotect(%p, %llu, %s)", m->addr,
		 (ull)m->len,
		 prot & PROT_WRITE ? "PROT_READ|PROT_WRITE" : "PROT_READ|PROT_EXEC");
	fz_refuse(w, true);
	if (!mprotect(m->addr, m->len, prot)) {
		fz_finding(w, prot & PROT_WRITE ?
			   "a mapping of a cpu file became writable" :
			   "a mapping of a cpu file became executable");
		mprotect(m->addr, m->len, PROT_READ);
	} else {
		fz_errno_ok(w, FZ_MPROTECT, errno, FZ_ERRS(EACCES, EPERM));
	}
}

/*
 * Read a byte of a mapping: the held sub-buffer is readable (its packet
 * header describes it, and past the content it is zeros), any other page
 * raises SIGBUS. Offsets are picked in the held sub-buffer 3 times in 4.
 */
void fz_op_touch(struct fz_worker *w)
{
	struct fz_map *m = fz_any_map(w);
	const struct lrb_packet_header *h;
	struct fz_reader *r;
	struct fz_file *f;
	u64 off, sb, start;
	bool in;
	char v;
	int sig;

	if (!m)
		return;
	r = &w->readers[m->reader];
	/* only a packet held is readable: take one first, 3 times in 4 */
	f = fz_reader_file(w, m->reader);
	if (!r->held && f && !fz_one_in(w, 4))
		fz_take(w, f);
	sb = r->info.subbuf_size;
	start = r->desc.mmap_offset;
	if (r->held && !fz_one_in(w, 4))
		off = start + fz_below(w, sb);
	else
		off = fz_below(w, m->len);
	in = r->held && off >= start && off < start + sb;
	fz_begin(w, FZ_TOUCH, "touch(mapping of cpu%u + %llu)%s", r->cpu,
		 (ull)off, in ? ", in the held sub-buffer" : "");
	fz_refuse(w, !in);
	sig = fz_probe(m->addr + off, &v);
	if (sig && sig != SIGBUS) {
		fz_finding(w, "signal %d (%s)", sig, strsignal(sig));
		return;
	}
	if (!in) {
		if (!sig)
			fz_finding(w, "readable: a page not held must raise SIGBUS");
		else
			fz_errno_ok(w, FZ_TOUCH, EFAULT, FZ_ERRS(EFAULT));
		return;
	}
	if (sig) {
		fz_finding(w, "SIGBUS in the held sub-buffer (pos %llu, mmap_offset %llu)",
			   (ull)r->desc.pos, (ull)start);
		return;
	}
	h = (const void *)(m->addr + start);
	if (off - start >= r->desc.content_size && v)
		fz_finding(w, "byte 0x%02x past the content (%llu bytes)",
			   (unsigned char)v, (ull)r->desc.content_size);
	else if (fz_probe((const char *)h, &v))
		fz_finding(w, "SIGBUS at the start of the held sub-buffer");
	else if (h->magic != LRB_PACKET_MAGIC || h->cpu_id != r->cpu ||
		 h->packet_size / 8 != r->desc.packet_size)
		fz_finding(w, "held packet header: magic 0x%x cpu_id %u packet_size %llu bits, GET_*SUBBUF said %llu bytes",
			   h->magic, h->cpu_id, (ull)h->packet_size,
			   (ull)r->desc.packet_size);
}
