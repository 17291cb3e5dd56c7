// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-receive --listen [HOST:]PORT -o DIR [--once] [--quiet]
 *
 * Accepts the connections of lrb-record --to and writes each recording as
 * a trace directory, as lrb-record -o would have. This file: options, the
 * listening socket, and a thread per connection that reads its hello and
 * runs it as a session or a stream. Documentation/tools/lrb-receive.rst
 * is the manual, with the protocol.
 */
#include "receive.h"

#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* A connection must say what it is within this time. */
#define RX_HELLO_TIMEOUT_S 30

struct rx_opts rx_opts;

/**
 * struct rx_conn - an accepted connection, for its thread
 * @fd: the socket
 * @peer: the other end's address
 */
struct rx_conn {
	int fd;
	char peer[128];
};

static void rx_usage(FILE *f)
{
	fputs("usage: lrb-receive --listen [HOST:]PORT -o DIR [--once] [--quiet]\n"
	      "Receive the traces lrb-record --to HOST:PORT sends, as trace directories.\n"
	      "  -l, --listen [HOST:]PORT  address to listen on (default host: any)\n"
	      "  -o, --output DIR          with --once: the trace directory; else each\n"
	      "                            recording goes to DIR/CHANNEL-YYYYMMDD-HHMMSS\n"
	      "  -1, --once                exit after one recording (status 0 if complete)\n"
	      "  -q, --quiet               no messages: errors and summaries only\n"
	      "  -h, --help                this help\n"
	      "Exit status: 0 success, 1 error, 2 usage error.\n", f);
}

static void rx_parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "output", required_argument, NULL, 'o' },
		{ "once", no_argument, NULL, '1' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "l:o:1qh", opts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			rx_opts.listen = optarg;
			break;
		case 'o':
			rx_opts.dir = optarg;
			break;
		case '1':
			rx_opts.once = true;
			break;
		case 'q':
			rx_opts.quiet = true;
			break;
		case 'h':
			rx_usage(stdout);
			exit(TOOL_EXIT_OK);
		default:
			fprintf(stderr, "Try 'lrb-receive --help' for more information.\n");
			exit(TOOL_EXIT_USAGE);
		}
	}
	if (optind != argc)
		tool_usage_error("unexpected argument '%s'", argv[optind]);
	if (!rx_opts.listen)
		tool_usage_error("give --listen [HOST:]PORT, the address lrb-record --to sends to");
	if (!rx_opts.dir)
		tool_usage_error("give -o DIR, where the traces go");
}

static int rx_listen(void)
{
	struct sockaddr_storage ss;
	char addr[128];
	socklen_t len;
	int fd, one = 1;

	if (tool_parse_addr(rx_opts.listen, true, &ss, &len))
		exit(TOOL_EXIT_USAGE);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && ss.ss_family == AF_INET6 && !strchr(rx_opts.listen, ']') &&
	    !strrchr(rx_opts.listen, ':')) {
		/* no IPv6 here: any IPv4 address */
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		unsigned short port = ((struct sockaddr_in6 *)&ss)->sin6_port;

		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_port = port;
		len = sizeof(*s4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0)
		tool_die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6) {
		int zero = 0;

		/* "::" takes IPv4 connections too */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	}
	tool_addr_str((struct sockaddr *)&ss, addr, sizeof(addr));
	if (bind(fd, (struct sockaddr *)&ss, len))
		tool_die("cannot listen on %s: bind: %s%s", addr,
			 strerror(errno),
			 errno == EADDRINUSE ?
			 ": another program (an lrb-receive?) uses the port; give another" :
			 "");
	if (listen(fd, 64))
		tool_die("cannot listen on %s: %s", addr, strerror(errno));
	if (!rx_opts.quiet)
		tool_err("listening on %s, traces %s %s", addr,
			 rx_opts.once ? "(one) into" : "under", rx_opts.dir);
	return fd;
}

static bool rx_hello_ok(const struct lrb_net_hello *h, const char *peer)
{
	if (memcmp(h->magic, LRB_NET_MAGIC, sizeof(h->magic))) {
		tool_err("%s: not an lrb-record connection (bad magic): ignored",
			 peer);
		return false;
	}
	if (h->version != LRB_NET_VERSION) {
		tool_err("%s: lrb-record speaks protocol version %u, this lrb-receive %u: use the same version of both",
			 peer, h->version, LRB_NET_VERSION);
		return false;
	}
	return true;
}

static void *rx_conn_thread(void *arg)
{
	struct rx_conn *c = arg;
	struct timeval tv = { .tv_sec = RX_HELLO_TIMEOUT_S };
	struct lrb_net_hello h;
	struct rx_session *s;
	struct rx_stream *st;
	const char *why;
	ssize_t n;

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = tool_read_full(c->fd, &h, sizeof(h));
	if (n != sizeof(h)) {
		tool_err("%s: connection closed before its hello (%s): ignored",
			 c->peer, n < 0 ? strerror(errno) : "short");
		goto out;
	}
	tv.tv_sec = 0;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	lrb_net_hello_order(&h);
	if (!rx_hello_ok(&h, c->peer))
		goto out;
	h.channel[sizeof(h.channel) - 1] = 0;
	if (h.kind == LRB_NET_SESSION) {
		rx_session_run(c->fd, &h, c->peer);
	} else if (h.kind == LRB_NET_STREAM) {
		s = rx_session_join(h.session, h.cpu, &st, &why);
		if (!s) {
			tool_err("%s: stream of cpu%u for session %016llx: %s: ignored",
				 c->peer, h.cpu, (unsigned long long)h.session,
				 why);
			goto out;
		}
		rx_stream_run(c->fd, s, st);
		rx_session_put(s);
	} else {
		tool_err("%s: unknown connection kind %u: ignored", c->peer,
			 h.kind);
	}
out:
	close(c->fd);
	free(c);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	int lfd;

	tool_name = "lrb-receive";
	rx_parse(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	lfd = rx_listen();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct rx_conn *c;
		pthread_t tid;
		int fd = accept4(lfd, (struct sockaddr *)&ss, &len,
				 SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE) {
				if (errno == EMFILE || errno == ENFILE)
					sleep(1);
				continue;
			}
			tool_die("accept: %s", strerror(errno));
		}
		c = malloc(sizeof(*c));
		if (!c) {
			tool_err("out of memory: connection dropped");
			close(fd);
			continue;
		}
		c->fd = fd;
		tool_addr_str((struct sockaddr *)&ss, c->peer, sizeof(c->peer));
		errno = pthread_create(&tid, &attr, rx_conn_thread, c);
		if (errno) {
			tool_err("cannot start a thread: %s: connection from %s dropped",
				 strerror(errno), c->peer);
			close(fd);
			free(c);
		}
	}
}
