// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck pipe-outlive: pages spliced into a pipe outlive the cpu file,
 * the channel and lrb.ko itself. Handshake with the scenario through files
 * in --sync DIR:
 *
 *   checker: splices cpu0's oldest packet into a pipe (the writers are
 *            stopped), checks pages_spliced, closes every cpu file;
 *                                                    creates DIR/ready
 *   script:  ctl "destroy", unloads the client, then lrb.ko, which must
 *            succeed: nothing of lrb is open;        creates DIR/go
 *   checker: reads the packet back from the pipe and verifies it; closing
 *            the pipe frees the pages without calling into lrb.ko.
 */
#include "vmcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int vc_cmd_pipe_outlive(const struct vc_opts *o)
{
	struct lrb_buf_counters before, after;
	struct vc_stream s;
	struct vc_chan ch;
	struct vc_geom g;
	ssize_t n, got = 0;
	int p[2];
	u8 *buf;

	if (!o->sync) {
		fprintf(stderr, "lrb-vmcheck pipe-outlive: --sync DIR is required\n");
		return 2;
	}
	vc_load_layout(o->chan);
	if (vc_chan_open(&ch, o->chan, O_RDONLY | O_NONBLOCK))
		return vc_report();
	vc_geom_from_info(&g, &ch.info[0], false);
	vc_stream_init(&s, 0, &g);
	buf = malloc(ch.info[0].subbuf_size);
	if (!vc_check(buf && !pipe(p), "malloc or pipe: %s", strerror(errno)))
		return vc_report();
	/* room for a whole packet in the pipe */
	fcntl(p[1], F_SETPIPE_SZ, (int)ch.info[0].subbuf_size);
	vc_check(!ioctl(ch.fd[0], LRB_IOC_GET_COUNTERS, &before),
		 "GET_COUNTERS: %s", strerror(errno));
	n = splice(ch.fd[0], NULL, p[1], NULL, ch.info[0].subbuf_size, 0);
	vc_check(n > 0 && !(n % VC_PAGE), "splice from cpu0: %zd (%s)", n,
		 strerror(errno));
	vc_check(!ioctl(ch.fd[0], LRB_IOC_GET_COUNTERS, &after),
		 "GET_COUNTERS: %s", strerror(errno));
	vc_check(n > 0 && after.pages_spliced - before.pages_spliced ==
			  (u64)n / VC_PAGE,
		 "pages_spliced grew by %llu for %zd bytes spliced",
		 (ull)(after.pages_spliced - before.pages_spliced), n);
	vc_chan_close(&ch);
	close(p[1]);
	if (vc_sync_touch(o->sync, "ready") ||
	    vc_sync_wait(o->sync, "go", o->timeout_s))
		return vc_report();

	while (n > 0 && got < n) {
		ssize_t r = read(p[0], buf + got, n - got);

		if (r <= 0)
			break;
		got += r;
	}
	vc_check(got == n, "read %zd of the %zd bytes spliced, after rmmod lrb",
		 got, n);
	if (got == n && n > 0)
		vc_verify_packet(&s, buf, n, 0);
	vc_check(s.packets == 1 && s.records > 0,
		 "the spliced packet holds %llu packets, %llu records",
		 (ull)s.packets, (ull)s.records);
	vc_stream_report(&s, false);
	close(p[0]);
	free(buf);
	return vc_report();
}
