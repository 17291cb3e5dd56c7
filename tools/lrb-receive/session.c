// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-receive: the session connection of a recording. It makes the trace
 * directory and writes the metadata, admits the CPU streams, and at the
 * end checks that every stream arrived whole (the byte counts the sender
 * announces against what was written) before it answers the sender.
 */
#include "receive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* After the sender's end, how long its streams may take to drain. */
#define RX_STREAMS_TIMEOUT_S 60

static pthread_mutex_t rx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rx_session *rx_sessions;

struct rx_session *rx_session_join(__u64 id, unsigned int cpu,
				   struct rx_stream **stp, const char **why)
{
	struct rx_session *s;
	unsigned int i;

	pthread_mutex_lock(&rx_lock);
	for (s = rx_sessions; s && s->id != id; s = s->next)
		;
	if (!s) {
		*why = "no such session (it ended, or was refused)";
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nst && s->st[i].cpu != cpu; i++)
		;
	if (i < s->nst || s->nst == s->ncpu) {
		*why = i < s->nst ? "a second stream for this CPU" :
				    "more streams than the session announced";
		pthread_mutex_unlock(&s->lock);
		s = NULL;
		goto out;
	}
	*stp = &s->st[s->nst++];
	(*stp)->cpu = cpu;
	(*stp)->connected = true;
	s->refs++;
	pthread_mutex_unlock(&s->lock);
out:
	pthread_mutex_unlock(&rx_lock);
	return s;
}

void rx_session_put(struct rx_session *s)
{
	unsigned int refs;

	pthread_mutex_lock(&s->lock);
	refs = --s->refs;
	pthread_mutex_unlock(&s->lock);
	if (refs)
		return;
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s->st);
	free(s);
}

static void rx_register(struct rx_session *s, bool add)
{
	struct rx_session **p;

	pthread_mutex_lock(&rx_lock);
	if (add) {
		s->next = rx_sessions;
		rx_sessions = s;
	} else {
		for (p = &rx_sessions; *p && *p != s; p = &(*p)->next)
			;
		if (*p)
			*p = s->next;
	}
	pthread_mutex_unlock(&rx_lock);
}

static bool rx_name_ok(const char *name)
{
	const char *p;

	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (p = name; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20)
			return false;
	return true;
}

/*
 * The trace directory of @s: -o DIR itself with --once, else a new
 * DIR/<channel>-<date>-<time>[-N]. 0, or -1 with @why set.
 */
static int rx_make_dir(struct rx_session *s, char *why, size_t len)
{
	char stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	size_t n;
	int i;

	if (rx_opts.once) {
		snprintf(s->dir, sizeof(s->dir), "%s", rx_opts.dir);
		if (trace_dir_create(s->dir)) {
			snprintf(why, len, "cannot write a trace to %s on the receiver (its messages say why)",
				 s->dir);
			return -1;
		}
		return 0;
	}
	if (tool_mkdirs(rx_opts.dir)) {
		snprintf(why, len, "cannot create %s on the receiver: %s",
			 rx_opts.dir, strerror(errno));
		return -1;
	}
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	n = snprintf(s->dir, sizeof(s->dir), "%s/%s-%s", rx_opts.dir, s->chan,
		     stamp);
	for (i = 1; n < sizeof(s->dir) - 8 && i < 1000; i++) {
		if (!mkdir(s->dir, 0755))
			return 0;
		if (errno != EEXIST)
			break;
		snprintf(s->dir + n, sizeof(s->dir) - n, "-%d", i);
	}
	snprintf(why, len, "cannot create a trace directory under %s on the receiver: %s",
		 rx_opts.dir, strerror(errno));
	return -1;
}

static int rx_write_file(struct rx_session *s, const char *name,
			 const char *data, size_t len, char *why, size_t wlen)
{
	char path[1200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || tool_write_full(fd, data, len) || close(fd)) {
		snprintf(why, wlen, "writing %s on the receiver: %s", path,
			 strerror(errno));
		tool_err("%s", why);
		return -1;
	}
	return 0;
}

/*
 * Read the sender's frames up to its end: the byte count of each stream
 * and the summary. 0, or -1 with @why set.
 */
static int rx_frames(int fd, struct rx_session *s, __u64 *announced_cpu,
		     unsigned int *nann, char *why, size_t len)
{
	struct lrb_net_frame f;
	char *p;
	int ret = 0;

	for (;;) {
		if (lrb_net_recv(fd, &f, &p)) {
			snprintf(why, len, "the sender went away before the end of the recording (%s)",
				 strerror(errno));
			return -1;
		}
		switch (f.type) {
		case LRB_NET_STREAM_END:
			if (*nann < s->ncpu) {
				announced_cpu[2 * *nann] = f.cpu;
				announced_cpu[2 * *nann + 1] = f.value;
				++*nann;
			}
			break;
		case LRB_NET_SUMMARY:
			if (rx_write_file(s, TRACE_SUMMARY, p, f.length, why,
					  len))
				ret = -1;
			break;
		case LRB_NET_END:
			free(p);
			return ret;
		default:
			snprintf(why, len, "unexpected frame type %u from the sender",
				 f.type);
			free(p);
			return -1;
		}
		free(p);
	}
}

/* Wait for the streams to end; then check each against its count. */
static int rx_check(struct rx_session *s, const __u64 *ann,
		    unsigned int nann, bool sender_ok, char *why, size_t len)
{
	struct timespec ts;
	unsigned int i, k, ended;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += RX_STREAMS_TIMEOUT_S;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		for (i = 0, ended = 0; i < s->nst; i++)
			ended += s->st[i].ended;
		if (ended == s->nst && (s->nst == s->ncpu || !sender_ok))
			break;
		if (pthread_cond_timedwait(&s->cond, &s->lock, &ts)) {
			if (sender_ok)
				snprintf(why, len, "only %u of %u streams ended within %d s of the end of the recording",
					 ended, s->ncpu, RX_STREAMS_TIMEOUT_S);
			ret = -1;
			break;
		}
	}
	for (k = 0; k < nann && sender_ok; k++) {
		for (i = 0; i < s->nst && s->st[i].cpu != ann[2 * k]; i++)
			;
		if (i == s->nst) {
			snprintf(why, len, "the stream of cpu%llu never connected",
				 (unsigned long long)ann[2 * k]);
			ret = -1;
			continue;
		}
		s->st[i].announced = true;
		s->st[i].sent = ann[2 * k + 1];
	}
	for (i = 0; i < s->nst; i++) {
		struct rx_stream *st = &s->st[i];

		if (st->failed) {
			snprintf(why, len, "cpu%u: %s", st->cpu, st->why);
			ret = -1;
		} else if (sender_ok && st->announced &&
			   st->sent != st->bytes) {
			snprintf(why, len, "cpu%u: %llu bytes sent, %llu received",
				 st->cpu, (unsigned long long)st->sent,
				 (unsigned long long)st->bytes);
			ret = -1;
		}
	}
	if (sender_ok && nann != s->ncpu && !ret) {
		snprintf(why, len, "the sender announced %u streams but ended %u",
			 s->ncpu, nann);
		ret = -1;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static void rx_summary(struct rx_session *s, bool ok, const char *why,
		       __u64 t0)
{
	__u64 ns = tool_now_ns() - t0, packets = 0, bytes = 0;
	struct rx_stream **order;
	unsigned int i, k;

	printf("lrb-receive: channel %s from %s, %u CPU%s, %.2f s: %s in %s\n",
	       s->chan, s->peer, s->ncpu, s->ncpu == 1 ? "" : "s", ns / 1e9,
	       ok ? "complete" : "INCOMPLETE", s->dir);
	if (!ok)
		printf("  %s\n", why);
	printf("%5s %9s %12s %8s\n", "cpu", "packets", "bytes", "MB/s");
	/* streams in CPU order; they arrived in any order */
	order = calloc(s->nst ? s->nst : 1, sizeof(*order));
	for (i = 0; order && i < s->nst; i++) {
		for (k = i; k && order[k - 1]->cpu > s->st[i].cpu; k--)
			order[k] = order[k - 1];
		order[k] = &s->st[i];
	}
	for (i = 0; order && i < s->nst; i++) {
		printf("%5u %9llu %12llu %8.2f\n", order[i]->cpu,
		       (unsigned long long)order[i]->packets,
		       (unsigned long long)order[i]->bytes,
		       tool_mbps(order[i]->bytes, ns));
		packets += order[i]->packets;
		bytes += order[i]->bytes;
	}
	free(order);
	printf("%5s %9llu %12llu %8.2f\n", "total",
	       (unsigned long long)packets, (unsigned long long)bytes,
	       tool_mbps(bytes, ns));
	fflush(stdout);
}

void rx_session_run(int fd, const struct lrb_net_hello *h, const char *peer)
{
	__u64 t0 = tool_now_ns(), *ann = NULL;
	struct rx_session *s = NULL;
	struct lrb_net_frame f;
	char why[2048] = "", *meta = NULL;
	unsigned int nann = 0;
	bool ok = false, registered = false;

	if (!h->ncpu || h->ncpu > TOOL_MAX_CPUS || !rx_name_ok(h->channel)) {
		snprintf(why, sizeof(why), "bad session: %u CPUs, channel '%s'",
			 h->ncpu, h->channel);
		goto refuse;
	}
	s = calloc(1, sizeof(*s));
	ann = calloc(2 * h->ncpu, sizeof(*ann));
	if (s)
		s->st = calloc(h->ncpu, sizeof(*s->st));
	if (!s || !ann || !s->st) {
		snprintf(why, sizeof(why), "the receiver is out of memory");
		goto refuse;
	}
	s->id = h->session;
	s->ncpu = h->ncpu;
	s->subbuf_size = h->subbuf_size;
	s->refs = 1;
	snprintf(s->chan, sizeof(s->chan), "%s", h->channel);
	snprintf(s->peer, sizeof(s->peer), "%s", peer);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (lrb_net_recv(fd, &f, &meta) || f.type != LRB_NET_METADATA) {
		snprintf(why, sizeof(why), "no metadata from the sender");
		goto refuse;
	}
	if (rx_make_dir(s, why, sizeof(why)) ||
	    rx_write_file(s, TRACE_METADATA, meta, f.length, why, sizeof(why)))
		goto refuse;
	rx_register(s, true);
	registered = true;
	snprintf(why, sizeof(why), "writing %s", s->dir);
	if (lrb_net_send(fd, LRB_NET_READY, 0, 0, why, strlen(why)))
		goto out;
	if (!rx_opts.quiet)
		tool_err("%s: receiving %u CPU%s of %s into %s", peer, s->ncpu,
			 s->ncpu == 1 ? "" : "s", s->chan, s->dir);
	why[0] = 0;
	ok = !rx_frames(fd, s, ann, &nann, why, sizeof(why));
	ok = !rx_check(s, ann, nann, ok, why, sizeof(why)) && ok;
	if (ok)
		snprintf(why, sizeof(why), "trace complete in %s", s->dir);
	lrb_net_send(fd, LRB_NET_RESULT, ok ? 0 : EIO, 0, why, strlen(why));
	rx_register(s, false);
	registered = false;
	rx_summary(s, ok, why, t0);
	if (!ok)
		tool_err("%s: the trace of %s in %s is incomplete: %s", peer,
			 s->chan, s->dir, why);
	goto out;
refuse:
	tool_err("%s: recording refused: %s", peer, why);
	lrb_net_send(fd, LRB_NET_READY, EINVAL, 0, why, strlen(why));
out:
	if (registered)
		rx_register(s, false);
	free(meta);
	free(ann);
	if (s && s->refs) {
		rx_session_put(s);
	} else if (s) {
		free(s->st);
		free(s);
	}
	if (rx_opts.once && h->ncpu) {
		/* the result is on its way to the sender: one recording done */
		shutdown(fd, SHUT_WR);
		exit(ok ? TOOL_EXIT_OK : TOOL_EXIT_ERROR);
	}
}
