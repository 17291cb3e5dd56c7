// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-consumer-bench: fill every CPU's ring with the test client's writers
 * (discard mode, nothing reading), then stop them and close the packet
 * each was filling, so that the ring holds only complete packets and no
 * writer runs while it is drained.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define CB_POLL_MS 10

static int cb_ctl(const char *cmd)
{
	int fd = open(CB_CTL, O_WRONLY);
	ssize_t n = -1;

	if (fd >= 0) {
		n = write(fd, cmd, strlen(cmd));
		close(fd);
	}
	if (n != (ssize_t)strlen(cmd)) {
		vc_fail("echo %s > %s: %s: is lrb_vm_client loaded (autostart=0)?",
			cmd, CB_CTL, strerror(errno));
		return -1;
	}
	return 0;
}

/* Records the buffer refused so far, all causes. */
static int cb_lost(struct vc_chan *ch, unsigned int cpu, u64 *lost)
{
	struct lrb_buf_counters c;

	if (ioctl(ch->fd[cpu], LRB_IOC_GET_COUNTERS, &c)) {
		vc_fail("cpu%u: LRB_IOC_GET_COUNTERS: %s", cpu,
			strerror(errno));
		return -1;
	}
	*lost = c.lost_full + c.lost_wrap + c.lost_big + c.lost_nest;
	return 0;
}

/* Every ring refused a record since @lost0 was sampled: 1, 0, or -1. */
static int cb_all_full(struct vc_chan *ch, const u64 *lost0)
{
	unsigned int cpu;
	u64 lost;

	for (cpu = 0; cpu < ch->ncpu; cpu++) {
		if (cb_lost(ch, cpu, &lost))
			return -1;
		if (lost == lost0[cpu])
			return 0;
	}
	return 1;
}

int cb_fill(struct vc_chan *ch, unsigned int timeout_s)
{
	u64 lost0[VC_MAX_CPUS], deadline;
	unsigned int cpu;
	int full = 0;

	for (cpu = 0; cpu < ch->ncpu; cpu++)
		if (cb_lost(ch, cpu, &lost0[cpu]))
			return -1;
	if (cb_ctl("start"))
		return -1;
	/* a refused record means the ring is full: discard mode */
	deadline = vc_now_ns() + timeout_s * 1000000000ULL;
	while (!full && vc_now_ns() < deadline) {
		vc_sleep_ms(CB_POLL_MS);
		full = cb_all_full(ch, lost0);
		if (full < 0)
			break;
	}
	/* every record reserved is committed when this returns */
	if (cb_ctl("stop") || full < 0)
		return -1;
	if (!full) {
		vc_fail("the client's writers did not fill every ring within %u s: are its task writers on (task_batch > 0) and the channel in discard mode?",
			timeout_s);
		return -1;
	}
	for (cpu = 0; cpu < ch->ncpu; cpu++) {
		if (ioctl(ch->fd[cpu], LRB_IOC_FLUSH, 0)) {
			vc_fail("cpu%u: LRB_IOC_FLUSH: %s: the last packet cannot be drained",
				cpu, strerror(errno));
			return -1;
		}
	}
	return 0;
}
