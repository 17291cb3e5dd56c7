// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck: end-to-end checks of lrb.ko's per-CPU files, run inside the
 * test VM by the scripts of tests/vm/scenarios against the test client's
 * channel.
 *
 * Build (static, so that it runs from the initramfs without a libc):
 *   make -C tests/vm/check        (-> tests/vm/check/lrb-vmcheck)
 * which runs, from the repository root:
 *   gcc -static -O2 -Wall -Wextra -Iinclude -Itests/vm \
 *	tests/vm/check/[a-z]*.c -lpthread -o tests/vm/check/lrb-vmcheck
 *
 * Every subcommand ends with "vmtest <test>: N passed, M failed" and exits
 * non-zero if anything failed (2 for a usage error). Run without arguments
 * for the usage; "selftest" runs on any host.
 */
#include "vmcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(void)
{
	fputs("usage: lrb-vmcheck COMMAND [OPTIONS]\n"
	      "  consume --chan NAME --via read|splice-file|splice-tcp|mmap [--out DIR]\n"
	      "          [--fail-nth K]\n"
	      "        consume every cpu file of a discard channel to end of file (destroy\n"
	      "        the channel meanwhile), verify everything, exact accounting; with\n"
	      "        --fail-nth, allocation 1..K in turn of each call on a cpu file fails\n"
	      "  snapshot --chan NAME [--count K] [--interval-ms MS] [--final]\n"
	      "        flight-recorder snapshots of an overwrite channel; --final after\n"
	      "        ctl \"stop\": the whole ring, twice, ends with the last attempts\n"
	      "  timer --chan NAME --period-us P [--duration S] [--slack-us U]\n"
	      "        the switch timer delivers a slow writer's records within P\n"
	      "  watermark --chan NAME [--cpu N]\n"
	      "        poll() with SET_WATERMARK(3), packets completed by FLUSH\n"
	      "  badinput --chan NAME [--cpu N]\n"
	      "        invalid opens, ioctls, splices, mmaps; stats and metadata\n"
	      "  destroyed --chan NAME --sync DIR\n"
	      "        files and mappings kept across destroy (handshake: see destroyed.c)\n"
	      "  pipe-outlive --chan NAME --sync DIR\n"
	      "        spliced pages read from a pipe after rmmod lrb (see pipe.c)\n"
	      "  trace --chan NAME --dir DIR [--dir DIR2...] [--stats FILE] [--snapshot [--live]]\n"
	      "        trace directories of lrb-record, verified from their files\n"
	      "  fault-load --ko PATH [--params \"P=V ...\"] [--chan NAME]\n"
	      "        fail every allocation of loading the module in turn: ENOMEM,\n"
	      "        nothing left behind (needs CONFIG_FAULT_INJECTION)\n"
	      "  fault-open --chan NAME\n"
	      "        the same for using cpu0, stats and metadata\n"
	      "  create-failed --ko PATH --params \"P=V ...\" --chan NAME\n"
	      "        a reader of cpu0 of a channel whose creation fails after\n"
	      "        publishing it gets ENODEV (lrb.ko's fail_publish, see faults.c)\n"
	      "  live-lag --out FILE --slack-us U\n"
	      "        babeltrace2 --clock-seconds output on stdin (lttng-live): every\n"
	      "        event shown within U of its timestamp; a copy in FILE\n"
	      "  selftest\n"
	      "        the verifier against corrupted synthetic packets (host only)\n"
	      "common options: --written FILE (client's counts, default "
	      VC_WRITTEN ")\n"
	      "                --timeout S (give up waiting, default 60)\n",
	      stderr);
}

static int parse_uint(const char *opt, const char *s, unsigned int *v)
{
	char *e;
	unsigned long n = strtoul(s, &e, 10);

	if (!*s || *e || n > 0xffffffffUL) {
		fprintf(stderr, "lrb-vmcheck: %s %s: want a number\n", opt, s);
		return -1;
	}
	*v = n;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(const struct vc_opts *o);
		bool needs_chan;
	} cmds[] = {
		{ "consume", vc_cmd_consume, true },
		{ "snapshot", vc_cmd_snapshot, true },
		{ "timer", vc_cmd_timer, true },
		{ "watermark", vc_cmd_watermark, true },
		{ "badinput", vc_cmd_badinput, true },
		{ "destroyed", vc_cmd_destroyed, true },
		{ "pipe-outlive", vc_cmd_pipe_outlive, true },
		{ "selftest", vc_cmd_selftest, false },
		{ "trace", vc_cmd_trace, true },
		{ "fault-load", vc_cmd_fault_load, false },
		{ "fault-open", vc_cmd_fault_open, true },
		{ "create-failed", vc_cmd_create_failed, true },
		{ "live-lag", vc_cmd_live_lag, false },
	};
	struct vc_opts o = {
		.via = "read",
		.out = "/tmp/lrb-vmcheck",
		.written = VC_WRITTEN,
		.timeout_s = 60,
		.slack_us = 250000,
		.duration_s = 3,
		.count = 3,
		.interval_ms = 200,
	};
	static char name[64];
	unsigned int i, c;
	int a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		print_usage();
		return 2;
	}
	for (c = 0; c < ARRAY_SIZE(cmds); c++)
		if (!strcmp(argv[1], cmds[c].name))
			break;
	if (c == ARRAY_SIZE(cmds)) {
		fprintf(stderr, "lrb-vmcheck: unknown command %s\n", argv[1]);
		print_usage();
		return 2;
	}
	for (a = 2; a < argc; a++) {
		const char *opt = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;
		static const struct {
			const char *opt;
			size_t off;
		} nums[] = {
			{ "--timeout", offsetof(struct vc_opts, timeout_s) },
			{ "--period-us", offsetof(struct vc_opts, period_us) },
			{ "--slack-us", offsetof(struct vc_opts, slack_us) },
			{ "--duration", offsetof(struct vc_opts, duration_s) },
			{ "--count", offsetof(struct vc_opts, count) },
			{ "--interval-ms", offsetof(struct vc_opts, interval_ms) },
			{ "--cpu", offsetof(struct vc_opts, cpu) },
			{ "--fail-nth", offsetof(struct vc_opts, fail_nth) },
		};

		if (!strcmp(opt, "--live")) {
			o.live = true;
			continue;
		}
		if (!strcmp(opt, "--final") || !strcmp(opt, "--snapshot")) {
			o.final = true;
			continue;
		}
		if (!val) {
			fprintf(stderr, "lrb-vmcheck: %s needs a value\n", opt);
			return 2;
		}
		a++;
		if (!strcmp(opt, "--chan")) {
			o.chan = val;
		} else if (!strcmp(opt, "--via")) {
			o.via = val;
		} else if (!strcmp(opt, "--out")) {
			o.out = val;
		} else if (!strcmp(opt, "--written")) {
			o.written = val;
		} else if (!strcmp(opt, "--dir")) {
			if (o.ndirs == VC_TRACE_DIRS) {
				fprintf(stderr, "lrb-vmcheck: at most %d --dir\n",
					VC_TRACE_DIRS);
				return 2;
			}
			o.dirs[o.ndirs++] = val;
		} else if (!strcmp(opt, "--stats")) {
			o.stats = val;
		} else if (!strcmp(opt, "--sync")) {
			o.sync = val;
		} else if (!strcmp(opt, "--ko")) {
			o.ko = val;
		} else if (!strcmp(opt, "--params")) {
			o.params = val;
		} else {
			for (i = 0; i < ARRAY_SIZE(nums); i++)
				if (!strcmp(opt, nums[i].opt))
					break;
			if (i == ARRAY_SIZE(nums)) {
				fprintf(stderr, "lrb-vmcheck: unknown option %s\n",
					opt);
				print_usage();
				return 2;
			}
			if (parse_uint(opt, val,
				       (unsigned int *)((char *)&o +
							nums[i].off)))
				return 2;
		}
	}
	if (cmds[c].needs_chan && !o.chan) {
		fprintf(stderr, "lrb-vmcheck %s: give --chan NAME (the client's name parameter)\n",
			cmds[c].name);
		return 2;
	}
	if ((!strcmp(cmds[c].name, "fault-load") ||
	     !strcmp(cmds[c].name, "create-failed")) && !o.ko) {
		fprintf(stderr, "lrb-vmcheck %s: give --ko PATH (the module to load)\n",
			cmds[c].name);
		return 2;
	}
	if (!o.params)
		o.params = "";
	if (!strcmp(cmds[c].name, "consume"))
		snprintf(name, sizeof(name), "consume-%s", o.via);
	else
		snprintf(name, sizeof(name), "%s", cmds[c].name);
	vc_test = name;
	return cmds[c].fn(&o);
}
