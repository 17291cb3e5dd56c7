// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-record --relayd URL: the recording goes to an lttng-relayd (LTTng
 * 2.11 or later) as lttng-sessiond and lttng-consumerd send a kernel
 * session's streams to it (relayd.h has the messages):
 *
 *  - control connection: VERSION, CREATE_SESSION, CREATE_TRACE_CHUNK (the
 *    session's only chunk, id 0), ADD_STREAM for the metadata and each
 *    CPU, SEND_METADATA, STREAMS_SENT; then SEND_INDEX for every packet
 *    with DATA_PENDING for the one before; at the end
 *    BEGIN_DATA_PENDING, QUIESCENT_CONTROL, DATA_PENDING for each CPU
 *    and END_DATA_PENDING until relayd has written everything, then
 *    CLOSE_STREAM;
 *  - data connection: every packet, after a data header naming its
 *    stream and its network sequence number.
 *
 * A packet goes out whole on the data connection and then its index on
 * the control one, both under one lock, so that relayd always holds the
 * index of every packet it has but the last. relayd answers the index
 * from its control thread, whether its data thread has written the
 * packet yet or not; its answer to DATA_PENDING tells: a packet is
 * "confirmed" once relayd said that it has written it or a later packet
 * of its stream (with write(2): in relayd's page cache, not synced to
 * its disk). With --live, each consumer thread calls
 * rec_relayd_tick() every live period: the CPU's packet is closed
 * (LRB_IOC_FLUSH), and a CPU that wrote nothing since its last packet
 * sends a beacon, the empty index entry with which lttng-consumerd tells
 * relayd and its live viewers up to when a stream is known to be quiet.
 */
#include "record.h"
#include "relayd.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/*
 * How long relayd may take to accept a connection, to answer a command,
 * and, at the end, to write the packets it was sent (the tests build
 * with a shorter one, not to wait 30 s for an error).
 */
#ifndef RLY_REPLY_TIMEOUT_S
#define RLY_REPLY_TIMEOUT_S 30
#endif
/* The longest output path relayd may answer CREATE_SESSION with. */
#define RLY_PATH_MAX 4096
/*
 * How often the end asks whether relayd has written everything (the
 * fuzzer builds with 0, not to sleep on answers of "not yet").
 */
#ifndef RLY_PENDING_POLL_US
#define RLY_PENDING_POLL_US 100000
#endif
/*
 * Live periods a live session stays open after its last packet, and at
 * most this long: a viewer asks relayd again every 0.1 s or so.
 */
#define REC_RELAYD_LINGER_PERIODS 5
#define REC_RELAYD_LINGER_MAX_NS (10 * 1000000000ULL)

/**
 * struct rly_cpu - one CPU's stream on relayd
 * @handle: relayd's stream id
 * @next_seq: network sequence number of the next packet, and the packets
 *	sent whole on the data connection
 * @sent_bytes: their bytes
 * @confirmed: packets relayd said it has written (DATA_PENDING answered 0)
 * @confirmed_bytes: their bytes
 * @ref_ts: the timestamp_end of the last packet whose index relayd took ...
 * @ref_ns: ... and tool_now_ns() when lrb-record had taken it
 * @buf: read consumer: the packet being put together
 * @have: bytes of @buf filled
 */
struct rly_cpu {
	__u64 handle;
	__u64 next_seq;
	__u64 sent_bytes;
	__u64 confirmed;
	__u64 confirmed_bytes;
	__u64 ref_ts;
	__u64 ref_ns;
	unsigned char *buf;
	size_t have;
};

/**
 * struct rly - the connection to relayd
 * @ctrl: control connection
 * @data: data connection
 * @lock: held while a packet and its index, or a beacon, are sent
 * @dead: a send or receive failed: nothing more is sent
 * @host: the host part of the URL
 * @ctrl_peer: control address, as text
 * @data_peer: data address, as text
 * @ctrl_addr: control address
 * @data_addr: data address
 * @addr_len: length of both
 * @live_port: the live port viewers connect to (for the message)
 * @hostname: the name this machine announces (the viewer URL has it)
 * @session: the session name
 * @session_id: relayd's id of the session
 * @output: relayd's output directory for the session, escaped: up to
 *	RLY_PATH_MAX bytes that relayd chose, printed on a terminal
 * @meta_handle: the metadata stream's id
 * @cpus: per CPU, in the order of struct rec's
 * @ncpu: how many
 * @opened: rec_relayd_open() ran: @lock and @cpus are set up
 */
struct rly {
	int ctrl;
	int data;
	pthread_mutex_t lock;
	bool dead;
	char host[256];
	char ctrl_peer[128];
	char data_peer[128];
	struct sockaddr_storage ctrl_addr;
	struct sockaddr_storage data_addr;
	socklen_t addr_len;
	unsigned int live_port;
	char hostname[65];
	char session[256];
	__u64 session_id;
	char output[4 * RLY_PATH_MAX + 1];
	__u64 meta_handle;
	struct rly_cpu *cpus;
	unsigned int ncpu;
	bool opened;
};

static struct rly rly_conn = { .ctrl = -1, .data = -1 };

/* A numeric address into @ss, with @port; 0 or -1. */
static int rly_numeric_addr(const char *host, unsigned int port,
			    struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		return 0;
	}
	return -1;
}

/*
 * @host's first address in /etc/hosts: the tools link statically, so
 * names are looked up without NSS or DNS. 0 or -1.
 */
static int rly_hosts_addr(const char *host, unsigned int port,
			  struct sockaddr_storage *ss, socklen_t *len)
{
	char *text = tool_read_file("/etc/hosts", NULL), *line, *save = NULL;
	int ret = -1;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line && ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#'), *tok, *save2 = NULL, *addr;

		if (hash)
			*hash = 0;
		addr = strtok_r(line, " \t", &save2);
		while (addr && (tok = strtok_r(NULL, " \t", &save2)))
			if (!strcmp(tok, host) &&
			    !rly_numeric_addr(addr, port, ss, len)) {
				ret = 0;
				break;
			}
	}
	free(text);
	return ret;
}

static int rly_resolve(const char *host, unsigned int port,
		       struct sockaddr_storage *ss, socklen_t *len)
{
	if (!rly_numeric_addr(host, port, ss, len))
		return 0;
	if (!strcmp(host, "localhost"))
		return rly_numeric_addr("127.0.0.1", port, ss, len);
	return rly_hosts_addr(host, port, ss, len);
}

static void rly_addr_str(const struct sockaddr_storage *ss, char *buf,
			 size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

static int rly_port(const char *s, size_t n, unsigned int *port)
{
	char text[8];
	__u64 v;

	if (!n || n >= sizeof(text))
		return -1;
	memcpy(text, s, n);
	text[n] = 0;
	if (tool_parse_u64(text, &v) || !v || v > 65535)
		return -1;
	*port = v;
	return 0;
}

int rec_relayd_parse(const char *url, bool quiet)
{
	struct rly *y = &rly_conn;
	unsigned int ctrl = RLY_PORT_CONTROL, data = RLY_PORT_DATA;
	const char *s = url, *end, *colon;
	size_t n;

	if (!strncmp(s, "net://", 6))
		s += 6;
	else if (!strncmp(s, "net6://", 7))
		s += 7;
	if (*s == '[') {
		end = strchr(s, ']');
		if (!end)
			goto bad;
		n = end - s - 1;
		if (n >= sizeof(y->host))
			goto bad;
		memcpy(y->host, s + 1, n);
		y->host[n] = 0;
		s = end + 1;
	} else {
		n = strcspn(s, ":/");
		if (n >= sizeof(y->host))
			goto bad;
		memcpy(y->host, s, n);
		y->host[n] = 0;
		s += n;
	}
	if (!y->host[0])
		goto bad;
	if (*s == ':') {
		s++;
		colon = s + strcspn(s, ":/");
		if (rly_port(s, colon - s, &ctrl))
			goto bad;
		s = colon;
		if (*s == ':') {
			s++;
			n = strcspn(s, "/");
			if (rly_port(s, n, &data))
				goto bad;
			s += n;
		}
	}
	if (*s == '/' && s[1]) {
		if (!quiet)
			tool_err("--relayd %s: a trace path after the address is not supported: relayd puts the trace in HOSTNAME/SESSION under its output directory",
				 url);
		return -1;
	}
	if (*s && strcmp(s, "/"))
		goto bad;
	if (rly_resolve(y->host, ctrl, &y->ctrl_addr, &y->addr_len) ||
	    rly_resolve(y->host, data, &y->data_addr, &y->addr_len)) {
		if (!quiet)
			tool_err("--relayd %s: unknown host '%s': give an IPv4 or IPv6 address (names come from /etc/hosts only, without DNS)",
				 url, y->host);
		return -1;
	}
	rly_addr_str(&y->ctrl_addr, y->ctrl_peer, sizeof(y->ctrl_peer));
	rly_addr_str(&y->data_addr, y->data_peer, sizeof(y->data_peer));
	/* the live port is not in the URL; relayd's default */
	y->live_port = RLY_PORT_LIVE;
	return 0;
bad:
	if (!quiet)
		tool_err("--relayd %s: want net://HOST[:CONTROL_PORT[:DATA_PORT]], e.g. net://127.0.0.1 (ports %u and %u) or net://[::1]:5342:5343",
			 url, RLY_PORT_CONTROL, RLY_PORT_DATA);
	return -1;
}

const char *rec_relayd_peer(void)
{
	return rly_conn.ctrl_peer;
}

/* All of @len bytes to a socket; a peer gone is an error, not a SIGPIPE. */
static int rly_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

#define RLY_KNOWN \
	"relayd's files hold the packets it confirmed writing, and perhaps some sent after them (see the summary)"

/*
 * A failure of the connection: say what it means for the recording. The
 * packets relayd confirmed are in its files (written, though perhaps not
 * yet on its disk if its machine went down); of those sent after them,
 * its files may hold all, some (the last perhaps in part) or none.
 */
static void rly_lost(struct rly *y, const char *what, int err)
{
	if (y->dead)
		return;
	y->dead = true;
	if (err == ETIMEDOUT || err == EAGAIN)
		tool_err("lttng-relayd at %s did not answer %s within %d s: the recording stops; %s",
			 y->ctrl_peer, what, RLY_REPLY_TIMEOUT_S, RLY_KNOWN);
	else
		tool_err("lttng-relayd at %s: %s: %s: relayd went away (killed or stopped?); the recording stops, %s",
			 y->ctrl_peer, what,
			 err ? strerror(err) : "connection closed", RLY_KNOWN);
}

/*
 * connect() within RLY_REPLY_TIMEOUT_S: a blocking one to a host that
 * does not answer (down, or a firewall dropping the SYNs) takes the
 * kernel's SYN retries, over two minutes. 0, or -1 with errno set.
 */
static int rly_connect_within(int fd, const struct sockaddr_storage *ss,
			      socklen_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	__u64 deadline = tool_now_ns() + RLY_REPLY_TIMEOUT_S * 1000000000ULL;
	__u64 now;
	socklen_t elen = sizeof(int);
	int err = 0, n, flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		return -1;
	if (connect(fd, (const struct sockaddr *)ss, len) &&
	    errno != EINPROGRESS)
		return -1;
	for (;;) {
		now = tool_now_ns();
		if (now >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = poll(&pfd, 1, (deadline - now + 999999) / 1000000);
		if (n > 0)
			break;
		if (n < 0 && errno != EINTR)
			return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
		return -1;
	if (err) {
		errno = err;
		return -1;
	}
	return fcntl(fd, F_SETFL, flags);
}

static int rly_connect(struct rly *y, const struct sockaddr_storage *ss,
		       const char *peer, const char *which)
{
	struct timeval tv = { .tv_sec = RLY_REPLY_TIMEOUT_S };
	int one = 1;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		tool_err("socket: %s", strerror(errno));
		return -1;
	}
	if (rly_connect_within(fd, ss, y->addr_len)) {
		if (errno == ETIMEDOUT)
			tool_err("cannot connect to lttng-relayd's %s port at %s: no answer within %d s: is the host up, and the port open in its firewall?",
				 which, peer, RLY_REPLY_TIMEOUT_S);
		else
			tool_err("cannot connect to lttng-relayd's %s port at %s: %s: is lttng-relayd running there, listening on that port (lttng-relayd -C tcp://0.0.0.0:%u -D tcp://0.0.0.0:%u)?",
				 which, peer, strerror(errno),
				 RLY_PORT_CONTROL, RLY_PORT_DATA);
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* indexes and commands are small: send them at once */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* A command and its payload (@len1 + @len2 bytes) on the control link. */
static int rly_send(struct rly *y, enum rly_cmd cmd, const void *p1,
		    size_t len1, const void *p2, size_t len2)
{
	struct rly_hdr h = {
		.data_size = htobe64(len1 + len2), .cmd = htobe32(cmd),
	};

	if (y->dead)
		return -1;
	if (rly_write(y->ctrl, &h, sizeof(h)) ||
	    (len1 && rly_write(y->ctrl, p1, len1)) ||
	    (len2 && rly_write(y->ctrl, p2, len2))) {
		rly_lost(y, "sending a command", errno);
		return -1;
	}
	return 0;
}

static int rly_recv(struct rly *y, void *p, size_t len, const char *what)
{
	ssize_t n;

	if (y->dead)
		return -1;
	n = tool_read_full(y->ctrl, p, len);
	if (n != (ssize_t)len) {
		rly_lost(y, what, n < 0 ? errno : 0);
		return -1;
	}
	return 0;
}

/* The 4-byte status most commands answer; 0 if it is LTTNG_OK. */
static int rly_status(struct rly *y, const char *what)
{
	struct rly_generic_reply rep;

	if (rly_recv(y, &rep, sizeof(rep), what))
		return -1;
	if (be32toh(rep.ret_code) != RLY_OK) {
		tool_err("lttng-relayd at %s refused %s (LTTng error code %u): see relayd's log (lttng-relayd -v)",
			 y->ctrl_peer, what, be32toh(rep.ret_code));
		y->dead = true;
		return -1;
	}
	return 0;
}

/* DATA_PENDING for @yc's first @packets packets. */
static int rly_ask_written(struct rly *y, struct rly_cpu *yc, __u64 packets)
{
	struct rly_data_pending m = {
		.stream_id = htobe64(yc->handle),
		/* -1 if none: relayd answers that nothing is pending */
		.last_net_seq_num = htobe64(packets - 1),
	};

	return rly_send(y, RLY_DATA_PENDING, &m, sizeof(m), NULL, 0);
}

/*
 * relayd's answer to rly_ask_written(@packets): 0 if it has written them
 * all (they are confirmed now; @bytes is their size), 1 if not yet, -1 on
 * an error.
 */
static int rly_written(struct rly *y, struct rly_cpu *yc, __u64 packets,
		       __u64 bytes)
{
	struct rly_generic_reply rep;
	__u32 code;

	if (rly_recv(y, &rep, sizeof(rep), "a data pending query"))
		return -1;
	code = be32toh(rep.ret_code);
	if (code == 0) {
		if (packets > yc->confirmed) {
			yc->confirmed = packets;
			yc->confirmed_bytes = bytes;
		}
		return 0;
	}
	if (code == 1)
		return 1;
	tool_err("lttng-relayd at %s answered a data pending query on its stream %llu with %d: it does not know the stream; see relayd's log (lttng-relayd -v)",
		 y->ctrl_peer, (unsigned long long)yc->handle, (int)code);
	y->dead = true;
	return -1;
}

static int rly_version(struct rly *y)
{
	struct rly_version v = {
		.major = htobe32(RLY_MAJOR), .minor = htobe32(RLY_MINOR),
	};
	unsigned int major, minor;
	ssize_t n;

	if (rly_send(y, RLY_VERSION, &v, sizeof(v), NULL, 0))
		return -1;
	n = tool_read_full(y->ctrl, &v, sizeof(v));
	if (n != sizeof(v)) {
		tool_err("%s did not answer the protocol version command (%s): is it lttng-relayd's control port?",
			 y->ctrl_peer,
			 n < 0 ? strerror(errno) : "connection closed");
		y->dead = true;
		return -1;
	}
	major = be32toh(v.major);
	minor = be32toh(v.minor);
	if (major != RLY_MAJOR || minor < RLY_MINOR_MIN) {
		tool_err("lttng-relayd at %s speaks protocol %u.%u; lrb-record speaks %u.%u and needs %u.%u or later (lttng-relayd 2.%u to 2.13): use a newer lttng-relayd",
			 y->ctrl_peer, major, minor, RLY_MAJOR, RLY_MINOR,
			 RLY_MAJOR, RLY_MINOR_MIN, RLY_MINOR_MIN);
		y->dead = true;
		return -1;
	}
	return 0;
}

static int rly_create_session(struct rly *y, struct rec *r, bool named)
{
	size_t sl = strlen(y->session) + 1, hl = strlen(y->hostname) + 1;
	struct rly_create_session m = {
		.session_name_len = htobe32(sl),
		.hostname_len = htobe32(hl),
		.base_path_len = htobe32(1),
		.live_timer = htobe32((__u32)(r->live * 1e6)),
		.session_name_contains_creation_time = !named,
		.creation_time = htobe64((__u64)r->start_realtime),
	};
	struct rly_create_session_reply rep;
	char names[512], path[RLY_PATH_MAX];
	__u32 plen;

	/* relayd keys trace chunks by this pair: any unique value will do */
	if (getrandom(m.sessiond_uuid, sizeof(m.sessiond_uuid), 0) !=
	    sizeof(m.sessiond_uuid)) {
		__u64 t = tool_now_ns() ^ getpid();

		memcpy(m.sessiond_uuid, &t, sizeof(t));
	}
	m.sessiond_uuid[0] |= 1;	/* the nil UUID means a pre-2.11 peer */
	m.session_id = htobe64(getpid());
	memcpy(names, y->session, sl);
	memcpy(names + sl, y->hostname, hl);
	names[sl + hl] = 0;
	if (rly_send(y, RLY_CREATE_SESSION, &m, sizeof(m), names, sl + hl + 1) ||
	    rly_recv(y, &rep, sizeof(rep), "creating the session"))
		return -1;
	plen = be32toh(rep.output_path_length);
	if (plen > sizeof(path)) {
		tool_err("lttng-relayd at %s answered the session creation with a %u-byte path: is it lttng-relayd?",
			 y->ctrl_peer, plen);
		return -1;
	}
	if (rly_recv(y, path, plen, "creating the session"))
		return -1;
	/* any bytes: never an escape sequence to the terminal */
	tool_escape(y->output, sizeof(y->output), path, plen);
	y->session_id = be64toh(rep.session_id);
	if (be32toh(rep.ret_code) != RLY_OK) {
		tool_err("lttng-relayd at %s refused to create session '%s' (LTTng error code %u): see relayd's log (lttng-relayd -v)",
			 y->ctrl_peer, y->session, be32toh(rep.ret_code));
		return -1;
	}
	return 0;
}

static int rly_add_stream(struct rly *y, const char *name, __u64 *handle)
{
	static const char path[] = "lrb";
	size_t nl = strlen(name) + 1;
	struct rly_add_stream m = {
		.channel_name_len = htobe32(nl),
		.pathname_len = htobe32(sizeof(path)),
	};
	struct rly_stream_reply rep;
	char names[256];

	memcpy(names, name, nl);
	memcpy(names + nl, path, sizeof(path));
	if (rly_send(y, RLY_ADD_STREAM, &m, sizeof(m), names,
		     nl + sizeof(path)) ||
	    rly_recv(y, &rep, sizeof(rep), "adding a stream"))
		return -1;
	if (be32toh(rep.ret_code) != RLY_OK) {
		tool_err("lttng-relayd at %s refused stream %s (LTTng error code %u): see relayd's log (lttng-relayd -v)",
			 y->ctrl_peer, name, be32toh(rep.ret_code));
		return -1;
	}
	*handle = be64toh(rep.handle);
	return 0;
}

/* Forget the session opened before, if any: a process may open another. */
static void rly_reset(struct rly *y)
{
	unsigned int i;

	if (y->opened) {
		for (i = 0; i < y->ncpu; i++)
			free(y->cpus[i].buf);
		free(y->cpus);
		pthread_mutex_destroy(&y->lock);
	}
	if (y->ctrl >= 0)
		close(y->ctrl);
	if (y->data >= 0)
		close(y->data);
	memset(y, 0, sizeof(*y));
	y->ctrl = -1;
	y->data = -1;
}

static int rly_open(struct rly *y, struct rec *r, const char *session,
		    bool named)
{
	struct rly_create_trace_chunk chunk = {
		.creation_timestamp = htobe64((__u64)r->start_realtime),
	};
	struct rly_metadata meta = { 0 };
	unsigned int i;

	rly_reset(y);
	if (rec_relayd_parse(r->relayd, false))
		return -1;
	pthread_mutex_init(&y->lock, NULL);
	y->opened = true;
	snprintf(y->session, sizeof(y->session), "%s", session);
	if (gethostname(y->hostname, sizeof(y->hostname) - 1) ||
	    !y->hostname[0])
		snprintf(y->hostname, sizeof(y->hostname), "localhost");
	y->cpus = calloc(r->ncpu, sizeof(*y->cpus));
	if (!y->cpus) {
		tool_err("out of memory");
		return -1;
	}
	y->ncpu = r->ncpu;
	for (i = 0; i < r->ncpu; i++) {
		if (r->consumer != REC_READ)
			continue;
		y->cpus[i].buf = malloc(r->cpus[i].info.subbuf_size);
		if (!y->cpus[i].buf) {
			tool_err("out of memory for a packet");
			return -1;
		}
	}
	y->ctrl = rly_connect(y, &y->ctrl_addr, y->ctrl_peer, "control");
	if (y->ctrl < 0 || rly_version(y) || rly_create_session(y, r, named))
		return -1;
	if (rly_send(y, RLY_CREATE_TRACE_CHUNK, &chunk, sizeof(chunk), NULL,
		     0) ||
	    rly_status(y, "creating the trace chunk") ||
	    rly_add_stream(y, TRACE_METADATA, &y->meta_handle))
		return -1;
	for (i = 0; i < r->ncpu; i++)
		if (rly_add_stream(y, r->cpus[i].name, &y->cpus[i].handle))
			return -1;
	meta.stream_id = htobe64(y->meta_handle);
	if (rly_send(y, RLY_SEND_METADATA, &meta, sizeof(meta), r->metadata,
		     r->metadata_len) ||
	    rly_send(y, RLY_STREAMS_SENT, NULL, 0, NULL, 0) ||
	    rly_status(y, "publishing the streams"))
		return -1;
	y->data = rly_connect(y, &y->data_addr, y->data_peer, "data");
	if (y->data < 0)
		return -1;
	if (!r->quiet) {
		tool_err("lttng-relayd at %s: session '%s' of host '%s', written to %s",
			 y->ctrl_peer, y->session, y->hostname, y->output);
		if (r->live)
			tool_err("live: babeltrace2 --input-format=lttng-live net://%s:%u/host/%s/%s",
				 y->host, y->live_port, y->hostname, y->session);
	}
	return 0;
}

int rec_relayd_open(struct rec *r, const char *session, bool named)
{
	struct rly *y = &rly_conn;

	if (!rly_open(y, r, session, named))
		return 0;
	/* nothing more is said to a relayd that did not take the session */
	y->dead = true;
	return -1;
}

/*
 * One whole packet, then its index, then whether relayd has written the
 * CPU's packet before it; 0 or -1. relayd's data thread
 * is usually still at the new packet when its control thread answers (a
 * question about it would nearly always get "not yet"), rarely further
 * behind. So a packet is confirmed when its CPU sends the next one, by a
 * beacon (--live) or at the end; an answer of "not yet" leaves it
 * unconfirmed until a later answer on its stream.
 */
static int rly_packet(struct rec_cpu *c, const unsigned char *p, size_t len)
{
	struct rly *y = &rly_conn;
	struct rly_cpu *yc = &y->cpus[c - c->r->cpus];
	struct lrb_packet_header h;
	struct rly_data_hdr dh = { 0 };
	struct rly_index ix = { 0 };
	__u64 taken = tool_now_ns(), before;
	bool ask_before;
	int ret = -1;

	memcpy(&h, p, sizeof(h));
	dh.stream_id = htobe64(yc->handle);
	dh.net_seq_num = htobe64(yc->next_seq);
	dh.data_size = htobe32(len);
	ix.relay_stream_id = htobe64(yc->handle);
	ix.net_seq_num = htobe64(yc->next_seq);
	ix.packet_size = htobe64((__u64)len * 8);
	ix.content_size = htobe64(h.content_size);
	ix.timestamp_begin = htobe64(h.timestamp_begin);
	ix.timestamp_end = htobe64(h.timestamp_end);
	ix.events_discarded = htobe64(h.events_discarded);
	ix.stream_id = htobe64(h.stream_id);
	ix.stream_instance_id = htobe64(h.cpu_id);
	ix.packet_seq_num = htobe64(h.packet_seq_num);
	pthread_mutex_lock(&y->lock);
	if (y->dead)
		goto out;
	if (rly_write(y->data, &dh, sizeof(dh)) ||
	    rly_write(y->data, p, len)) {
		rly_lost(y, "sending a packet", errno);
		goto out;
	}
	before = yc->sent_bytes;
	ask_before = yc->confirmed < yc->next_seq;
	yc->next_seq++;
	yc->sent_bytes += len;
	/*
	 * One command at a time: relayd's socket has Nagle on, so a second
	 * small answer in flight waits for the ACK of the first, which
	 * this end delays (some 40 ms).
	 */
	if (rly_send(y, RLY_SEND_INDEX, &ix, sizeof(ix), NULL, 0) ||
	    rly_status(y, "a packet's index") ||
	    (ask_before && (rly_ask_written(y, yc, yc->next_seq - 1) ||
			    rly_written(y, yc, yc->next_seq - 1, before) < 0)))
		goto out;
	/* this CPU's clock was at least here when the packet was taken */
	yc->ref_ts = h.timestamp_end;
	yc->ref_ns = taken;
	ret = 0;
out:
	pthread_mutex_unlock(&y->lock);
	if (ret)
		c->failed = true;
	return ret;
}

/*
 * The packet_size, in bytes, of the packet header at @h: 0 unless it is
 * more than a header and at most a sub-buffer, as lrb.ko's are (packets
 * take a page at least). A header-only packet would never be put
 * together below: it is complete before its size is known to be more.
 */
static __u64 rly_packet_size(const struct rec_cpu *c, const void *h,
			     __u64 *bits)
{
	__u64 size;

	memcpy(bits, (const char *)h +
		     offsetof(struct lrb_packet_header, packet_size),
	       sizeof(*bits));
	size = *bits / 8;
	return size > sizeof(struct lrb_packet_header) &&
	       size <= c->info.subbuf_size ? size : 0;
}

int rec_relayd_write(struct rec_cpu *c, const void *buf, size_t len)
{
	struct rly_cpu *yc = &rly_conn.cpus[c - c->r->cpus];
	const unsigned char *p = buf;
	const size_t hdr = sizeof(struct lrb_packet_header);
	__u64 size, bits = 0;
	size_t n;

	while (len) {
		/* mmap: a whole packet; read: whatever read() gave */
		if (!yc->have && len >= hdr) {
			size = rly_packet_size(c, p, &bits);
			if (!size)
				goto bad;
			if (len >= size) {
				if (rly_packet(c, p, size))
					return -1;
				p += size;
				len -= size;
				continue;
			}
		}
		if (!yc->buf)
			goto cut;
		/* the header first, then the rest of the size it gives */
		size = hdr;
		if (yc->have >= hdr) {
			size = rly_packet_size(c, yc->buf, &bits);
			if (!size)
				goto bad;
		}
		n = size - yc->have;
		if (n > len)
			n = len;
		memcpy(yc->buf + yc->have, p, n);
		yc->have += n;
		p += n;
		len -= n;
		if (yc->have == hdr && !rly_packet_size(c, yc->buf, &bits))
			goto bad;
		if (yc->have > hdr && yc->have == size) {
			yc->have = 0;
			if (rly_packet(c, yc->buf, size))
				return -1;
		}
	}
	return 0;
bad:
	tool_err("cpu%u: a packet of the stream says it is %llu bits long (packet_size): an lrb packet is more than its %zu-byte header and at most a sub-buffer (%llu bytes); lrb.ko and these tools disagree on the ABI, or the stream is corrupt",
		 c->cpu, (unsigned long long)bits, hdr,
		 (unsigned long long)c->info.subbuf_size);
	c->failed = true;
	return -1;
cut:
	tool_err("cpu%u: a packet came in pieces (%zu bytes): the mmap consumer takes whole packets; lrb.ko and these tools disagree on the ABI",
		 c->cpu, len);
	c->failed = true;
	return -1;
}

int rec_relayd_beacon(struct rec_cpu *c, __u64 now)
{
	struct rly *y = &rly_conn;
	struct rly_cpu *yc = &y->cpus[c - c->r->cpus];
	struct rly_index ix = { 0 };
	int ret = 0;
	__u64 ts;

	/* relayd ignores beacons of a stream that sent no packet yet */
	if (!yc->next_seq)
		return 0;
	pthread_mutex_lock(&y->lock);
	if (!y->dead) {
		/*
		 * The CPU's clock, never ahead of it: it was at least its
		 * last packet's end when the packet was taken, and has run
		 * since. Only its own packets tell: CPUs' clocks may differ,
		 * and lrb.ko's clock is the channel's own, not one
		 * lrb-record can read.
		 */
		ts = yc->ref_ts + (__u64)((double)(now - yc->ref_ns) *
					  c->info.clock_freq / 1e9);
		ix.relay_stream_id = htobe64(yc->handle);
		ix.net_seq_num = htobe64(yc->next_seq - 1);
		ix.timestamp_end = htobe64(ts);
		ix.stream_id = htobe64(c->info.stream_id);
		if (rly_send(y, RLY_SEND_INDEX, &ix, sizeof(ix), NULL, 0) ||
		    rly_status(y, "a live beacon"))
			ret = -1;
		/* a quiet CPU's last packets: written by now? */
		else if (yc->confirmed != yc->next_seq &&
			 (rly_ask_written(y, yc, yc->next_seq) ||
			  rly_written(y, yc, yc->next_seq, yc->sent_bytes) < 0))
			ret = -1;
	}
	pthread_mutex_unlock(&y->lock);
	if (ret)
		c->failed = true;
	return ret;
}

int rec_relayd_tick(struct rec_cpu *c)
{
	struct rly_cpu *yc = &rly_conn.cpus[c - c->r->cpus];
	struct lrb_positions pos;
	__u64 now = tool_now_ns();

	/* close the packet being filled: it becomes readable now */
	if (ioctl(c->fd, LRB_IOC_FLUSH, 0)) {
		if (errno == ENODEV)
			return 0;
		tool_err("cpu%u: LRB_IOC_FLUSH: %s", c->cpu, strerror(errno));
		c->failed = true;
		return -1;
	}
	if (ioctl(c->fd, LRB_IOC_GET_POSITIONS, &pos)) {
		if (errno == ENODEV)
			return 0;
		tool_err("cpu%u: LRB_IOC_GET_POSITIONS: %s", c->cpu,
			 strerror(errno));
		c->failed = true;
		return -1;
	}
	/*
	 * Written or not yet sent since the flush: the packet says more.
	 * Else nothing was written before @now that relayd does not have.
	 */
	if (pos.produced != pos.consumed || yc->have)
		return 0;
	return rec_relayd_beacon(c, now);
}

/*
 * lttng-consumerd's data pending check, once: 0 if relayd has written
 * every packet sent (confirming them) and the metadata, 1 if not yet, -1
 * on an error.
 */
static int rly_pending_round(struct rly *y, struct rec *r)
{
	struct rly_data_pending_session sm = {
		.session_id = htobe64(y->session_id),
	};
	struct rly_quiescent_control qm = {
		.stream_id = htobe64(y->meta_handle),
	};
	struct rly_generic_reply rep;
	struct rly_cpu *yc;
	unsigned int i;
	int pending = 0, ret;

	if (rly_send(y, RLY_BEGIN_DATA_PENDING, &sm, sizeof(sm), NULL, 0) ||
	    rly_status(y, "beginning a data pending check") ||
	    rly_send(y, RLY_QUIESCENT_CONTROL, &qm, sizeof(qm), NULL, 0) ||
	    rly_status(y, "a control quiescence check"))
		return -1;
	/* every stream, sent a packet or not: END counts the others pending */
	for (i = 0; i < r->ncpu; i++) {
		yc = &y->cpus[i];
		if (rly_ask_written(y, yc, yc->next_seq))
			return -1;
		ret = rly_written(y, yc, yc->next_seq, yc->sent_bytes);
		if (ret < 0)
			return -1;
		pending |= ret;
	}
	if (rly_send(y, RLY_END_DATA_PENDING, &sm, sizeof(sm), NULL, 0) ||
	    rly_recv(y, &rep, sizeof(rep), "ending a data pending check"))
		return -1;
	return pending || rep.ret_code;
}

/*
 * Until relayd has written every packet sent (RLY_REPLY_TIMEOUT_S at
 * most), as lttng-sessiond waits on lttng-consumerd's data pending check
 * before it stops a session; 0 or -1.
 */
static int rly_wait_written(struct rly *y, struct rec *r)
{
	__u64 t0 = tool_now_ns(), waited;
	bool said = false;
	int ret;

	while ((ret = rly_pending_round(y, r)) == 1) {
		waited = tool_now_ns() - t0;
		if (waited >= RLY_REPLY_TIMEOUT_S * 1000000000ULL) {
			tool_err("lttng-relayd at %s has not written every packet it was sent within %d s: its files hold those it confirmed (see the summary); see relayd's log (lttng-relayd -v)",
				 y->ctrl_peer, RLY_REPLY_TIMEOUT_S);
			return -1;
		}
		if (!said && waited >= 1000000000ULL && !r->quiet) {
			tool_err("waiting for lttng-relayd at %s to write the last packets (%d s at most)",
				 y->ctrl_peer, RLY_REPLY_TIMEOUT_S);
			said = true;
		}
		usleep(RLY_PENDING_POLL_US);
	}
	return ret;
}

int rec_relayd_close(struct rec *r)
{
	struct rly *y = &rly_conn;
	struct rly_close_stream m;
	unsigned int i;
	__u64 linger;
	int ret = 0;

	/* before CLOSE_STREAM: relayd forgets a stream closed and written */
	if (!y->dead && rly_wait_written(y, r))
		ret = -1;
	if (r->live && !y->dead) {
		/*
		 * babeltrace2 (2.0.4) leaves a live session as soon as relayd
		 * reports it closed, packets not shown yet or not: every
		 * stream says it is complete up to now, then the session
		 * stays open a while for viewers to catch up.
		 */
		for (i = 0; i < r->ncpu; i++)
			if (!y->cpus[i].have &&
			    rec_relayd_beacon(&r->cpus[i], tool_now_ns()))
				ret = -1;
		linger = REC_RELAYD_LINGER_PERIODS * r->live * 1e9;
		tool_sleep_ns(linger < REC_RELAYD_LINGER_MAX_NS ? linger :
			      REC_RELAYD_LINGER_MAX_NS);
	}
	for (i = 0; i < r->ncpu && !y->dead; i++) {
		if (y->cpus[i].have) {
			tool_err("cpu%u: the stream ended inside a packet: its last %zu bytes were not sent",
				 r->cpus[i].cpu, y->cpus[i].have);
			ret = -1;
		}
		m.stream_id = htobe64(y->cpus[i].handle);
		/* the last packet's, or -1 (none): relayd waits for it */
		m.last_net_seq_num = htobe64(y->cpus[i].next_seq - 1);
		if (rly_send(y, RLY_CLOSE_STREAM, &m, sizeof(m), NULL, 0) ||
		    rly_status(y, "closing a stream"))
			ret = -1;
	}
	m.stream_id = htobe64(y->meta_handle);
	m.last_net_seq_num = htobe64(-1ULL);
	if (!y->dead && (rly_send(y, RLY_CLOSE_STREAM, &m, sizeof(m), NULL, 0) ||
			 rly_status(y, "closing the metadata stream")))
		ret = -1;
	if (y->dead)
		ret = -1;
	if (y->data >= 0)
		close(y->data);
	if (y->ctrl >= 0)
		close(y->ctrl);
	y->data = -1;
	y->ctrl = -1;
	return ret;
}

__u64 rec_relayd_confirmed(const struct rec_cpu *c, __u64 *bytes)
{
	const struct rly_cpu *yc;

	*bytes = 0;
	if (!rly_conn.cpus)
		return 0;
	yc = &rly_conn.cpus[c - c->r->cpus];
	*bytes = yc->confirmed_bytes;
	return yc->confirmed;
}

__u64 rec_relayd_sent(const struct rec_cpu *c, __u64 *bytes)
{
	const struct rly_cpu *yc;

	*bytes = 0;
	if (!rly_conn.cpus)
		return 0;
	yc = &rly_conn.cpus[c - c->r->cpus];
	*bytes = yc->sent_bytes;
	return yc->next_seq;
}

const char *rec_relayd_output(void)
{
	return rly_conn.output;
}
