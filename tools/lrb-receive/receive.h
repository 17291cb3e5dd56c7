/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb-receive: the network end of lrb-record --to (protocol in
 * tools/common/net.h, manual in Documentation/tools/lrb-receive.rst).
 * main.c listens and hands each connection to a thread; session.c runs a
 * recording's session connection, stream.c the connection of each CPU.
 */
#ifndef _LRB_RECEIVE_H
#define _LRB_RECEIVE_H

#include <pthread.h>

#include "net.h"

/**
 * struct rx_opts - command line
 * @listen: [HOST:]PORT
 * @dir: -o DIR: the trace directory with @once, else their parent
 * @once: exit after one recording
 * @quiet: no messages: errors and summaries only
 */
struct rx_opts {
	const char *listen;
	const char *dir;
	bool once;
	bool quiet;
};

extern struct rx_opts rx_opts;

/**
 * struct rx_stream - the stream of one CPU
 * @cpu: the CPU
 * @connected: its connection arrived
 * @ended: it reached its end (or failed)
 * @failed: writing or framing failed; @why says how
 * @announced: the sender's byte count arrived (%LRB_NET_STREAM_END)
 * @sent: that count
 * @bytes: bytes received
 * @packets: whole packets received
 * @why: what failed
 */
struct rx_stream {
	unsigned int cpu;
	bool connected;
	bool ended;
	bool failed;
	bool announced;
	__u64 sent;
	__u64 bytes;
	__u64 packets;
	char why[1400];
};

/**
 * struct rx_session - one recording being received
 * @id: the sender's session number
 * @chan: channel name
 * @peer: the sender's address
 * @dir: the trace directory
 * @subbuf_size: largest packet
 * @ncpu: streams announced
 * @st: their state, in order of arrival
 * @nst: streams connected
 * @refs: the session thread and each stream thread hold one
 * @lock: protects the counts and flags of @st, @nst and @refs
 * @cond: signalled when a stream ends
 * @next: in the list of sessions
 */
struct rx_session {
	__u64 id;
	char chan[64];
	char peer[128];
	char dir[1024];
	__u64 subbuf_size;
	unsigned int ncpu;
	struct rx_stream *st;
	unsigned int nst;
	unsigned int refs;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rx_session *next;
};

/* session.c */
void rx_session_run(int fd, const struct lrb_net_hello *h, const char *peer);
/* Find a session by id and take a stream slot for @cpu; NULL if none. */
struct rx_session *rx_session_join(__u64 id, unsigned int cpu,
				   struct rx_stream **st, const char **why);

/* Drop a reference; the last one frees @s. */
void rx_session_put(struct rx_session *s);

/* stream.c */
void rx_stream_run(int fd, struct rx_session *s, struct rx_stream *st);

#endif /* _LRB_RECEIVE_H */
