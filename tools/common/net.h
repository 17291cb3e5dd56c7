/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The network protocol between lrb-record --to and lrb-receive
 * (Documentation/tools/lrb-receive.rst describes it), and socket helpers.
 *
 * lrb-record opens one session connection, then one stream connection per
 * CPU recorded. Each connection starts with a struct lrb_net_hello. On the
 * session connection frames follow both ways; on a stream connection the
 * CPU's packets follow, as the cpu file delivers them, until the sender
 * shuts the connection down. All fields are little-endian.
 */
#ifndef _LRB_TOOL_NET_H
#define _LRB_TOOL_NET_H

#include <sys/socket.h>

#include "tool.h"

#define LRB_NET_MAGIC "LRBTRACE"	/* 8 bytes, no NUL */
#define LRB_NET_VERSION 1U

/* struct lrb_net_hello.kind */
#define LRB_NET_SESSION 1U
#define LRB_NET_STREAM 2U

/**
 * struct lrb_net_hello - first bytes of every connection, 128 bytes
 * @magic: %LRB_NET_MAGIC
 * @version: %LRB_NET_VERSION
 * @kind: %LRB_NET_SESSION or %LRB_NET_STREAM
 * @session: chosen at random by the sender; its stream connections carry
 *	the same value
 * @cpu: stream: the CPU whose packets follow; session: 0
 * @ncpu: session: the number of stream connections the sender opens
 * @subbuf_size: sub-buffer size of the channel (largest packet)
 * @channel: channel name, NUL-terminated
 * @reserved: 0
 */
struct lrb_net_hello {
	char magic[8];
	__u32 version;
	__u32 kind;
	__u64 session;
	__u32 cpu;
	__u32 ncpu;
	__u64 subbuf_size;
	char channel[64];
	__u8 reserved[24];
};

/* struct lrb_net_frame.type */
enum lrb_net_frame_type {
	LRB_NET_METADATA = 1,	/* sender: the channel's metadata text */
	LRB_NET_READY,		/* receiver: ready for the streams, or not */
	LRB_NET_STREAM_END,	/* sender: @cpu's stream sent @value bytes */
	LRB_NET_SUMMARY,	/* sender: .lrb-record.json */
	LRB_NET_END,		/* sender: nothing follows */
	LRB_NET_RESULT,		/* receiver: the trace is complete, or not */
};

/**
 * struct lrb_net_frame - a frame of the session connection, 24 bytes,
 *	followed by @length bytes
 * @type: enum lrb_net_frame_type
 * @cpu: %LRB_NET_STREAM_END: the CPU; %LRB_NET_READY, %LRB_NET_RESULT:
 *	0 for success, else an errno value (the text says what failed)
 * @value: %LRB_NET_STREAM_END: bytes sent on the CPU's stream connection
 * @length: bytes following the frame: metadata, JSON or a message
 */
struct lrb_net_frame {
	__u32 type;
	__u32 cpu;
	__u64 value;
	__u64 length;
};

/*
 * Convert the integers of a hello between this CPU's byte order and the
 * protocol's (little-endian), in place: before sending, after receiving.
 */
void lrb_net_hello_order(struct lrb_net_hello *h);

/* Largest frame payload accepted (metadata, summary, messages). */
#define LRB_NET_MAX_PAYLOAD (16U << 20)

/*
 * Parse "HOST:PORT", "[IPV6]:PORT" or, if @host_optional, "PORT" (any
 * address). HOST is an IPv4 or IPv6 address, localhost or a name of
 * /etc/hosts (no DNS: the tools link statically). 0, or -1 after
 * printing why.
 */
int tool_parse_addr(const char *s, bool host_optional,
		    struct sockaddr_storage *ss, socklen_t *len);
/* "ADDR:PORT" of @sa in @buf. */
char *tool_addr_str(const struct sockaddr *sa, char *buf, size_t len);

/* Send a frame (in the protocol's byte order) and its payload; 0 or -1. */
int lrb_net_send(int fd, __u32 type, __u32 cpu, __u64 value,
		 const void *payload, __u64 length);
/*
 * Receive a frame; its payload (up to %LRB_NET_MAX_PAYLOAD bytes) in a
 * malloc'd, NUL-terminated buffer in @payload. 0, or -1 with errno set
 * (ECONNRESET for an early end of the connection, EPROTO for a bad
 * frame).
 */
int lrb_net_recv(int fd, struct lrb_net_frame *f, char **payload);

#endif /* _LRB_TOOL_NET_H */
