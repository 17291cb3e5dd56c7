// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses and session frames of the lrb-record/lrb-receive protocol
 * (net.h). Names are resolved without NSS (numeric, localhost or
 * /etc/hosts) so that the static tools need no shared library at run time.
 */
#include "net.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A numeric address into @ss, with @port; 0 or -1. */
static int tool_numeric_addr(const char *host, unsigned int port,
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

/* The first address of @host in /etc/hosts; 0 or -1. */
static int tool_hosts_addr(const char *host, unsigned int port,
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
			    !tool_numeric_addr(addr, port, ss, len)) {
				ret = 0;
				break;
			}
	}
	free(text);
	return ret;
}

int tool_parse_addr(const char *s, bool host_optional,
		    struct sockaddr_storage *ss, socklen_t *len)
{
	char host[256] = "";
	const char *colon, *port_s, *h = host;
	__u64 port;

	colon = strrchr(s, ':');
	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':' ||
		    (size_t)(end - s - 1) >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, end - s - 1);
		host[end - s - 1] = 0;
		port_s = end + 2;
	} else if (colon) {
		if ((size_t)(colon - s) >= sizeof(host))
			goto bad;
		memcpy(host, s, colon - s);
		host[colon - s] = 0;
		port_s = colon + 1;
	} else {
		if (!host_optional)
			goto bad;
		port_s = s;
	}
	if (tool_parse_u64(port_s, &port) || !port || port > 65535)
		goto bad;
	if (!*h) {
		if (!host_optional)
			goto bad;
		h = "::";
	}
	if (!tool_numeric_addr(h, port, ss, len))
		return 0;
	if (!strcmp(h, "localhost"))
		return tool_numeric_addr("127.0.0.1", port, ss, len);
	if (!tool_hosts_addr(h, port, ss, len))
		return 0;
	tool_err("%s: unknown host '%s': give an IPv4 or IPv6 address (names come from /etc/hosts only, without DNS)",
		 s, h);
	return -1;
bad:
	tool_err("'%s' is not %s: for example 127.0.0.1:5000, [::1]:5000%s",
		 s, host_optional ? "[HOST:]PORT" : "HOST:PORT",
		 host_optional ? " or 5000" : "");
	return -1;
}

char *tool_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		port = ntohs(s4->sin_port);
		snprintf(buf, len, "%s:%u", a, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		port = ntohs(s6->sin6_port);
		snprintf(buf, len, "[%s]:%u", a, port);
	} else {
		snprintf(buf, len, "(family %u)", sa->sa_family);
	}
	return buf;
}

/* htole and letoh are the same swap (or none) */
void lrb_net_hello_order(struct lrb_net_hello *h)
{
	h->version = htole32(h->version);
	h->kind = htole32(h->kind);
	h->session = htole64(h->session);
	h->cpu = htole32(h->cpu);
	h->ncpu = htole32(h->ncpu);
	h->subbuf_size = htole64(h->subbuf_size);
}

int lrb_net_send(int fd, __u32 type, __u32 cpu, __u64 value,
		 const void *payload, __u64 length)
{
	struct lrb_net_frame f = {
		.type = htole32(type), .cpu = htole32(cpu),
		.value = htole64(value), .length = htole64(length),
	};

	if (tool_write_full(fd, &f, sizeof(f)))
		return -1;
	return length ? tool_write_full(fd, payload, length) : 0;
}

int lrb_net_recv(int fd, struct lrb_net_frame *f, char **payload)
{
	ssize_t n = tool_read_full(fd, f, sizeof(*f));
	char *p;

	*payload = NULL;
	if (n < 0)
		return -1;
	if (n != sizeof(*f)) {
		errno = ECONNRESET;
		return -1;
	}
	f->type = le32toh(f->type);
	f->cpu = le32toh(f->cpu);
	f->value = le64toh(f->value);
	f->length = le64toh(f->length);
	if (f->length > LRB_NET_MAX_PAYLOAD || !f->type ||
	    f->type > LRB_NET_RESULT) {
		errno = EPROTO;
		return -1;
	}
	p = malloc(f->length + 1);
	if (!p)
		return -1;
	n = tool_read_full(fd, p, f->length);
	if (n < 0 || (__u64)n != f->length) {
		free(p);
		if (n >= 0)
			errno = ECONNRESET;
		return -1;
	}
	p[f->length] = 0;
	*payload = p;
	return 0;
}
