// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-record --to HOST:PORT: the sending side of the lrb-receive protocol
 * (tools/common/net.h, Documentation/tools/lrb-receive.rst). A session
 * connection carries the metadata, then the end of each stream and the
 * summary, and brings back the receiver's verdict; each CPU's packets go
 * on a connection of their own, so that they can be spliced to it.
 */
#include "record.h"
#include "net.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <unistd.h>

/* How long the receiver may take to confirm the end of the recording. */
#define REC_NET_RESULT_TIMEOUT_S 60

static int rec_connect(struct rec *r, const struct sockaddr_storage *ss,
		       socklen_t len, const struct lrb_net_hello *hello)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct lrb_net_hello le = *hello;

	if (fd < 0) {
		tool_err("socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)ss, len)) {
		tool_err("connect to %s: %s: is lrb-receive --listen running there?",
			 r->net_peer, strerror(errno));
		close(fd);
		return -1;
	}
	lrb_net_hello_order(&le);
	if (tool_write_full(fd, &le, sizeof(le))) {
		tool_err("sending to %s: %s", r->net_peer, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int rec_net_open(struct rec *r)
{
	struct lrb_net_hello hello = {
		.version = LRB_NET_VERSION, .kind = LRB_NET_SESSION,
		.ncpu = r->ncpu, .subbuf_size = r->cpus[0].info.subbuf_size,
	};
	struct sockaddr_storage ss;
	struct lrb_net_frame f;
	socklen_t len;
	char *msg;
	unsigned int i;

	if (strlen(r->chan) >= sizeof(hello.channel)) {
		tool_err("channel name '%s' is too long for the protocol (at most %zu bytes)",
			 r->chan, sizeof(hello.channel) - 1);
		return -1;
	}
	if (tool_parse_addr(r->to, false, &ss, &len))
		return -1;
	tool_addr_str((struct sockaddr *)&ss, r->net_peer, sizeof(r->net_peer));
	memcpy(hello.magic, LRB_NET_MAGIC, sizeof(hello.magic));
	memcpy(hello.channel, r->chan, strlen(r->chan) + 1);
	if (getrandom(&hello.session, sizeof(hello.session), 0) !=
	    sizeof(hello.session))
		hello.session = tool_now_ns() ^ ((__u64)getpid() << 32);
	r->net = rec_connect(r, &ss, len, &hello);
	if (r->net < 0)
		return -1;
	if (lrb_net_send(r->net, LRB_NET_METADATA, 0, 0, r->metadata,
			 r->metadata_len)) {
		tool_err("sending the metadata to %s: %s", r->net_peer,
			 strerror(errno));
		return -1;
	}
	if (lrb_net_recv(r->net, &f, &msg)) {
		tool_err("%s did not answer the session request: %s: is it lrb-receive, of the version of this lrb-record?",
			 r->net_peer, strerror(errno));
		return -1;
	}
	if (f.type != LRB_NET_READY || f.cpu) {
		tool_err("%s refused the recording: %s", r->net_peer,
			 f.type == LRB_NET_READY ? msg : "unexpected answer");
		free(msg);
		return -1;
	}
	if (!r->quiet)
		tool_err("sending to %s: %s", r->net_peer, msg);
	free(msg);
	hello.kind = LRB_NET_STREAM;
	hello.ncpu = 0;
	for (i = 0; i < r->ncpu; i++) {
		hello.cpu = r->cpus[i].cpu;
		r->cpus[i].out = rec_connect(r, &ss, len, &hello);
		if (r->cpus[i].out < 0)
			return -1;
	}
	return 0;
}

int rec_net_finish(struct rec *r, const char *summary, size_t len)
{
	struct timeval tv = { .tv_sec = REC_NET_RESULT_TIMEOUT_S };
	struct lrb_net_frame f;
	unsigned int i;
	char *msg;

	for (i = 0; i < r->ncpu; i++)
		if (lrb_net_send(r->net, LRB_NET_STREAM_END, r->cpus[i].cpu,
				 r->cpus[i].bytes, NULL, 0))
			goto send_failed;
	if (lrb_net_send(r->net, LRB_NET_SUMMARY, 0, 0, summary, len) ||
	    lrb_net_send(r->net, LRB_NET_END, 0, 0, NULL, 0))
		goto send_failed;
	setsockopt(r->net, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (lrb_net_recv(r->net, &f, &msg)) {
		tool_err("%s did not confirm the recording within %d s: %s: the trace it wrote may be incomplete",
			 r->net_peer, REC_NET_RESULT_TIMEOUT_S,
			 errno == EAGAIN ? "timed out" : strerror(errno));
		return -1;
	}
	if (f.type != LRB_NET_RESULT) {
		tool_err("%s answered the end of the recording with frame type %u: is it lrb-receive, of the version of this lrb-record?",
			 r->net_peer, f.type);
		free(msg);
		return -1;
	}
	r->net_result = msg;
	if (f.cpu) {
		tool_err("%s: the trace is not complete: %s", r->net_peer, msg);
		return -1;
	}
	return 0;
send_failed:
	tool_err("sending the end of the recording to %s: %s: the trace it wrote may be incomplete",
		 r->net_peer, strerror(errno));
	return -1;
}
