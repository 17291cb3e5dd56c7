// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-receive: the stream connection of one CPU. Its bytes go to the
 * stream file <channel>_<cpu> as they come; on the way every packet
 * header is checked and counted, so that a stream cut short or not made
 * of lrb packets is reported instead of left for the trace readers.
 */
#include "receive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lrb/decode.h>

#define RX_BUF_SIZE (256U << 10)
#define HDR_SIZE sizeof(struct lrb_packet_header)

/**
 * struct rx_framer - packet boundaries in the received bytes
 * @hdr: header of the current packet
 * @have: bytes of @hdr received
 * @left: bytes of the current packet still due after its header
 * @off: stream offset of the next byte
 * @start: stream offset of the current packet
 */
struct rx_framer {
	struct lrb_packet_header hdr;
	unsigned int have;
	__u64 left;
	__u64 off;
	__u64 start;
};

/* Walk @len bytes; -1 with @st->why set on a bad header. */
static int rx_frame(struct rx_framer *f, struct rx_session *s,
		    struct rx_stream *st, const unsigned char *p, size_t len)
{
	struct lrb_packet_header h;
	size_t n;

	while (len) {
		if (f->have < HDR_SIZE) {
			if (!f->have)
				f->start = f->off;
			n = HDR_SIZE - f->have < len ? HDR_SIZE - f->have : len;
			memcpy((char *)&f->hdr + f->have, p, n);
			f->have += n;
			f->off += n;
			p += n;
			len -= n;
			if (f->have < HDR_SIZE)
				break;
			/*
			 * The sender's byte order and page size, not
			 * necessarily ours: whole bytes, a header at least
			 */
			if (lrb_packet_header_load(&h, &f->hdr) < 0 ||
			    h.packet_size % 8 || h.packet_size / 8 < HDR_SIZE ||
			    h.packet_size / 8 > s->subbuf_size) {
				snprintf(st->why, sizeof(st->why),
					 "packet %llu at byte %llu: not an lrb packet header (magic 0x%08x, packet_size %llu bits)",
					 (unsigned long long)st->packets,
					 (unsigned long long)f->start,
					 h.magic,
					 (unsigned long long)h.packet_size);
				return -1;
			}
			f->left = h.packet_size / 8 - HDR_SIZE;
		}
		n = len < f->left ? len : f->left;
		f->left -= n;
		f->off += n;
		p += n;
		len -= n;
		if (!f->left) {
			f->have = 0;
			st->packets++;
		}
	}
	return 0;
}

void rx_stream_run(int fd, struct rx_session *s, struct rx_stream *st)
{
	unsigned char *buf = malloc(RX_BUF_SIZE);
	struct rx_framer fr = { .have = 0 };
	char path[1200], name[96];
	bool framed = true;
	int out = -1;
	ssize_t n;

	trace_stream_name(name, sizeof(name), s->chan, st->cpu);
	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	if (!buf) {
		snprintf(st->why, sizeof(st->why), "out of memory");
		goto fail;
	}
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		snprintf(st->why, sizeof(st->why), "cannot create %s: %s", path,
			 strerror(errno));
		goto fail;
	}
	for (;;) {
		n = read(fd, buf, RX_BUF_SIZE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(st->why, sizeof(st->why), "receiving: %s",
				 strerror(errno));
			goto fail;
		}
		if (!n)
			break;
		if (framed && rx_frame(&fr, s, st, buf, n))
			framed = false;	/* reported at the end */
		if (tool_write_full(out, buf, n)) {
			snprintf(st->why, sizeof(st->why), "writing %s: %s",
				 path, strerror(errno));
			goto fail;
		}
		st->bytes += n;
	}
	if (!framed)
		goto fail;
	if (fr.have) {
		snprintf(st->why, sizeof(st->why),
			 "the stream ends inside a packet, after %llu bytes: its last packet is cut short",
			 (unsigned long long)st->bytes);
		goto fail;
	}
	if (close(out)) {
		out = -1;
		snprintf(st->why, sizeof(st->why), "writing %s: %s", path,
			 strerror(errno));
		goto fail;
	}
	out = -1;
	goto done;
fail:
	st->failed = true;
	tool_err("%s: cpu%u of %s: %s", s->peer, st->cpu, s->chan, st->why);
done:
	if (out >= 0)
		close(out);
	free(buf);
	pthread_mutex_lock(&s->lock);
	st->ended = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}
