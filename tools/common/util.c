// SPDX-License-Identifier: GPL-2.0
/*
 * Messages, parsing, I/O and time helpers of the lrb tools.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *tool_name = "lrb";

unsigned long tool_page_size(void)
{
	long n = sysconf(_SC_PAGESIZE);

	if (n <= 0)
		tool_die("sysconf(_SC_PAGESIZE) failed: cannot tell the kernel's page size");
	return n;
}

static void tool_vmsg(const char *fmt, va_list ap)
{
	char msg[1024];

	/* one write, so that messages of threads do not interleave */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s: %s\n", tool_name, msg);
}

void tool_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(fmt, ap);
	va_end(ap);
}

void tool_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(fmt, ap);
	va_end(ap);
	exit(TOOL_EXIT_ERROR);
}

void tool_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", tool_name);
	exit(TOOL_EXIT_USAGE);
}

int tool_parse_u64(const char *s, __u64 *v)
{
	unsigned long long n;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = n;
	return 0;
}

int tool_parse_seconds(const char *s, double min, double max, double *v)
{
	char *end;
	double d;

	if (!s || !*s)
		return -1;
	errno = 0;
	d = strtod(s, &end);
	/* NaN fails both comparisons */
	if (errno || *end || !(d >= min && d <= max))
		return -1;
	*v = d;
	return 0;
}

int tool_parse_cpus(const char *s, bool *set, unsigned int max)
{
	unsigned long a, b, n = 0;
	const char *p = s;
	char *end;

	if (!s || !*s)
		return -1;
	memset(set, 0, max * sizeof(*set));
	for (;;) {
		if (*p < '0' || *p > '9')
			return -1;
		a = strtoul(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return -1;
			b = strtoul(p, &end, 10);
			p = end;
		}
		if (a > b || b >= max)
			return -1;
		for (; a <= b; a++) {
			if (!set[a])
				n++;
			set[a] = true;
		}
		if (!*p)
			return n;
		if (*p++ != ',')
			return -1;
	}
}

char *tool_escape(char *buf, size_t len, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	for (i = 0; i < n && s[i] && o + 5 <= len; i++) {
		unsigned char ch = s[i];

		if (ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = '\\';
		} else if (ch >= 0x20 && ch < 0x7f) {
			buf[o++] = ch;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	if (len)
		buf[o] = 0;
	return buf;
}

int tool_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

ssize_t tool_read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (!n)
			break;
		done += n;
	}
	return done;
}

char *tool_read_file(const char *path, size_t *lenp)
{
	size_t len = 0, size = 16384;
	char *buf = malloc(size), *nbuf;
	int fd, err;
	ssize_t n;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	for (;;) {
		if (size - len < 2) {
			nbuf = realloc(buf, size * 2);
			if (!nbuf) {
				errno = ENOMEM;
				goto fail;
			}
			buf = nbuf;
			size *= 2;
		}
		n = read(fd, buf + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = err;
	return NULL;
}

int tool_mkdirs(const char *path)
{
	char buf[4096];
	size_t i, len = strlen(path);

	if (!len || len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i])
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		buf[i] = path[i];
	}
	return 0;
}

__u64 tool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void tool_sleep_ns(__u64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

double tool_mbps(__u64 bytes, __u64 ns)
{
	return ns ? bytes * 1e3 / ns : 0;
}
