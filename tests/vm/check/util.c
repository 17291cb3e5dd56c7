// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck helpers: pass/fail accounting, time, the channel's cpu files,
 * the client's debugfs and sysfs files, stats lines and the metadata.
 */
#include "vmcheck.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *vc_test = "vmcheck";
bool vc_quiet;
static ull passed, failed;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

void vc_pass(void)
{
	__atomic_add_fetch(&passed, 1, __ATOMIC_RELAXED);
}

static void vc_vfail(const char *fmt, va_list ap)
{
	__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
	if (vc_quiet)
		return;
	pthread_mutex_lock(&out_lock);
	printf("FAIL %s: ", vc_test);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

void vc_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vc_vfail(fmt, ap);
	va_end(ap);
}

bool vc_check_fn(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		vc_pass();
		return true;
	}
	va_start(ap, fmt);
	vc_vfail(fmt, ap);
	va_end(ap);
	return false;
}

bool vc_check_err(long ret, int err, int want, int alt, const char *what)
{
	if (ret == -1 && (err == want || (alt && err == alt))) {
		vc_pass();
		return true;
	}
	if (ret == -1)
		vc_fail("%s: errno %s, want %s%s%s", what, strerrorname_np(err),
			strerrorname_np(want), alt ? " or " : "",
			alt ? strerrorname_np(alt) : "");
	else
		vc_fail("%s: returned %ld, want -1 with %s", what, ret,
			strerrorname_np(want));
	return false;
}

void vc_info(const char *fmt, ...)
{
	va_list ap;

	if (vc_quiet)
		return;
	va_start(ap, fmt);
	pthread_mutex_lock(&out_lock);
	printf("%s: ", vc_test);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	va_end(ap);
}

ull vc_passed(void)
{
	return __atomic_load_n(&passed, __ATOMIC_RELAXED);
}

ull vc_failed(void)
{
	return __atomic_load_n(&failed, __ATOMIC_RELAXED);
}

int vc_report(void)
{
	printf("vmtest %s: %llu passed, %llu failed\n", vc_test, vc_passed(),
	       vc_failed());
	fflush(stdout);
	return vc_failed() ? 1 : 0;
}

u64 vc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void vc_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

char *vc_chan_path(char *buf, size_t len, const char *chan, const char *file)
{
	snprintf(buf, len, "/dev/lrb/%s/%s", chan, file);
	return buf;
}

int vc_possible_cpus(void)
{
	char *s = vc_read_file("/sys/devices/system/cpu/possible", NULL);
	int n = 0;
	char *p;

	if (!s)
		return -1;
	/* "0-3" or "0,2-5": count every CPU of every range */
	for (p = s;;) {
		unsigned long a, b;
		char *e;

		a = strtoul(p, &e, 10);
		if (e == p)
			break;
		b = a;
		if (*e == '-')
			b = strtoul(e + 1, &e, 10);
		n += b - a + 1;
		if (*e != ',')
			break;
		p = e + 1;
	}
	free(s);
	return n;
}

int vc_chan_open(struct vc_chan *ch, const char *name, int flags)
{
	char path[256];
	struct dirent *de;
	unsigned int n = 0, cpu;
	int possible;
	DIR *d;

	memset(ch, 0, sizeof(*ch));
	ch->name = name;
	d = opendir(vc_chan_path(path, sizeof(path), name, ""));
	if (!d) {
		vc_fail("open %s: %s: is lrb.ko loaded and the client's channel \"%s\" created?",
			path, strerror(errno), name);
		return -1;
	}
	while ((de = readdir(d)))
		if (sscanf(de->d_name, "cpu%u", &cpu) == 1)
			n++;
	closedir(d);
	possible = vc_possible_cpus();
	vc_check(n && (int)n == possible,
		 "/dev/lrb/%s has %u cpu files, want one per possible CPU (%d)",
		 name, n, possible);
	if (!n)
		return -1;
	if (n > VC_MAX_CPUS)
		n = VC_MAX_CPUS;
	for (cpu = 0; cpu < n; cpu++) {
		char file[32];

		snprintf(file, sizeof(file), "cpu%u", cpu);
		ch->fd[cpu] = open(vc_chan_path(path, sizeof(path), name, file),
				   flags);
		if (ch->fd[cpu] < 0) {
			vc_fail("open %s: %s", path, strerror(errno));
			goto fail;
		}
		if (ioctl(ch->fd[cpu], LRB_IOC_GET_INFO, &ch->info[cpu])) {
			vc_fail("%s: LRB_IOC_GET_INFO: %s", path,
				strerror(errno));
			close(ch->fd[cpu]);
			goto fail;
		}
		ch->ncpu = cpu + 1;
	}
	for (cpu = 0; cpu < n; cpu++) {
		const struct lrb_buf_info *i = &ch->info[cpu];

		vc_check(i->cpu == cpu && i->subbuf_size >= VC_PAGE &&
			 !(i->subbuf_size & (i->subbuf_size - 1)) &&
			 i->num_subbuf >= 2 &&
			 i->mmap_len >= i->subbuf_size * i->num_subbuf &&
			 !(i->mmap_len % VC_PAGE) &&
			 i->subbuf_size == ch->info[0].subbuf_size &&
			 i->num_subbuf == ch->info[0].num_subbuf,
			 "cpu%u GET_INFO: cpu %u subbuf_size %llu num_subbuf %llu mmap_len %llu: inconsistent",
			 cpu, i->cpu, (ull)i->subbuf_size, (ull)i->num_subbuf,
			 (ull)i->mmap_len);
	}
	return 0;
fail:
	vc_chan_close(ch);
	return -1;
}

void vc_chan_close(struct vc_chan *ch)
{
	unsigned int cpu;

	for (cpu = 0; cpu < ch->ncpu; cpu++)
		if (ch->fd[cpu] >= 0)
			close(ch->fd[cpu]);
	ch->ncpu = 0;
}

char *vc_read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int vc_read_written(const char *path, struct vc_client_cpu *cl,
		    unsigned int ncpu)
{
	char *text = vc_read_file(path, NULL), *line, *save;
	int found = 0;

	memset(cl, 0, sizeof(*cl) * ncpu);
	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int cpu;
		ull task, irq, lost;

		if (sscanf(line, "cpu%u task=%llu irq=%llu lost=%llu", &cpu,
			   &task, &irq, &lost) != 4 || cpu >= ncpu)
			continue;
		cl[cpu].task = task;
		cl[cpu].irq = irq;
		cl[cpu].lost = lost;
		cl[cpu].valid = true;
		found++;
	}
	free(text);
	return found;
}

long long vc_client_param(const char *param)
{
	char path[256], *s, *e;
	long long v;

	snprintf(path, sizeof(path), VC_CLIENT_PARAMS "/%s", param);
	s = vc_read_file(path, NULL);
	if (!s)
		return -1;
	v = strtoll(s, &e, 10);
	if (e == s)
		v = -1;
	free(s);
	return v;
}

static const struct {
	const char *key;
	size_t off;
} vc_stats_keys[] = {
#define K(f) { #f, offsetof(struct lrb_buf_counters, f) }
	K(records_written), K(lost_full), K(lost_wrap), K(lost_big),
	K(lost_nest), K(lost_packets), K(produced), K(consumed),
	K(packets_read), K(bytes_read), K(pages_spliced), K(lost_overwrite),
#undef K
};

int vc_parse_stats_line(const char *line, struct lrb_buf_counters *c)
{
	unsigned int i, seen = 0;
	const char *p;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < ARRAY_SIZE(vc_stats_keys);
	     i++) {
		size_t kl = strlen(vc_stats_keys[i].key);
		char *e;

		/* " key=" so that one key is not the tail of another */
		for (p = strstr(line, vc_stats_keys[i].key); p;
		     p = strstr(p + 1, vc_stats_keys[i].key))
			if ((p == line || p[-1] == ' ') && p[kl] == '=')
				break;
		if (!p)
			continue;
		*(u64 *)((char *)c + vc_stats_keys[i].off) =
			strtoull(p + kl + 1, &e, 10);
		if (e != p + kl + 1 && (*e == ' ' || !*e || *e == '\n'))
			seen++;
	}
	return seen == i ? 0 : -1;
}

struct vc_layout vc_layout = { .large = false, .tsc_bits = 27 };

int vc_layout_from_metadata(const char *text, struct vc_layout *l)
{
	const char *p = strstr(text, ":= lrb_ts_t;");
	const char *q = strstr(text, "event.header");
	unsigned int ts, id;

	if (!p || !q)
		return -1;
	/* typealias integer { size = <ts bits>; ... } := lrb_ts_t; */
	while (p > text && strncmp(p, "typealias", 9))
		p--;
	if (sscanf(p, "typealias integer { size = %u;", &ts) != 1)
		return -1;
	/* event.header := struct { enum : integer { size = <id bits>; */
	if (sscanf(q, "event.header := struct { enum : integer { size = %u;",
		   &id) != 1)
		return -1;
	if (id == 32 && ts == 32) {
		l->large = true;
		l->tsc_bits = 32;
		return 0;
	}
	if (id + ts != 32 || ts < 1 || ts > 31)
		return -1;
	l->large = false;
	l->tsc_bits = ts;
	return 0;
}

int vc_load_layout(const char *chan)
{
	char path[256], *text;
	int ret;

	text = vc_read_file(vc_chan_path(path, sizeof(path), chan, "metadata"),
			    NULL);
	if (!text) {
		vc_info("cannot read %s (%s): assuming compact headers with 27 timestamp bits",
			path, strerror(errno));
		return -1;
	}
	ret = vc_layout_from_metadata(text, &vc_layout);
	if (ret)
		vc_info("%s: record header layout not recognised: assuming compact, 27 timestamp bits",
			path);
	free(text);
	return ret;
}

void vc_geom_from_info(struct vc_geom *g, const struct lrb_buf_info *info,
		       bool exact_seq)
{
	long long size = vc_client_param("size");

	g->subbuf_size = info->subbuf_size;
	g->stream_id = info->stream_id;
	g->data_len = size >= (long long)LRB_VM_RECORD_MIN ?
			      size - (long long)LRB_VM_RECORD_MIN : -1;
	g->exact_seq = exact_seq;
}

int vc_sync_touch(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0) {
		vc_fail("create %s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int vc_sync_wait(const char *dir, const char *name, unsigned int timeout_s)
{
	u64 end = vc_now_ns() + timeout_s * 1000000000ULL;
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (stat(path, &st)) {
		if (vc_now_ns() > end) {
			vc_fail("%s did not appear within %u s: the scenario script did not go on",
				path, timeout_s);
			return -1;
		}
		vc_sleep_ms(20);
	}
	return 0;
}

static void vc_fatal_signal(int sig, siginfo_t *si, void *uc vc_unused)
{
	char msg[200];
	int n;

	n = snprintf(msg, sizeof(msg),
		     "FAIL %s: signal %d reading address %p: a mapping of a held packet must stay readable until PUT_SUBBUF\nvmtest %s: %llu passed, %llu failed\n",
		     vc_test, sig, si->si_addr, vc_test, vc_passed(),
		     vc_failed() + 1);
	if (write(1, msg, n) < 0)
		_exit(3);
	_exit(3);
}

void vc_catch_fatal_signals(void)
{
	struct sigaction sa = { .sa_sigaction = vc_fatal_signal,
				.sa_flags = SA_SIGINFO };

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

static sigjmp_buf vc_jb;
static volatile sig_atomic_t vc_sig;

static void vc_probe_handler(int sig)
{
	vc_sig = sig;
	siglongjmp(vc_jb, 1);
}

/* Read one byte at @p: 0 if readable, else the signal it raised. */
int vc_probe(const volatile u8 *p)
{
	struct sigaction sa = { .sa_handler = vc_probe_handler }, obus, osegv;
	int ret = 0;

	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	if (sigsetjmp(vc_jb, 1))
		ret = vc_sig;
	else
		(void)*p;
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	return ret;
}
