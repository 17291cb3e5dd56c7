// SPDX-License-Identifier: GPL-2.0
/*
 * lrb_sample_events.ko: the LRB_EVENT() sample in the kernel. At load it
 * creates the channel "events" and writes count records of each of the
 * three events of lrb_sample_events.h; a reader (lrb-record) takes them
 * from /dev/lrb/events, and rmmod destroys the channel, which flushes the
 * last packets. babeltrace2 prints the trace with every field.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include <lrb/kchan.h>
#include "lrb_sample_events.h"

static unsigned int count = 1000;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "records of each event written at load");

static const struct lrb_config lrb_se_cfg = {
	.mode = LRB_MODE_DISCARD,
	.alloc = LRB_ALLOC_PER_CPU,
	.wakeup = LRB_WAKEUP_BY_WRITER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.cb.clock_read = lrb_clock_default,
};

static struct lrb_kchan *lrb_se_kc;

static int __init lrb_se_init(void)
{
	struct lrb_kchan_attr attr = {
		.name = "events",
		.chan.subbuf_size = 65536,
		.chan.num_subbuf = 8,
		.events = lrb_sample_events,
		.nr_events = ARRAY_SIZE(lrb_sample_events),
	};
	unsigned int i, lost = 0;
	char text[64];

	lrb_se_kc = lrb_kchan_create(&lrb_se_cfg, &attr);
	if (IS_ERR(lrb_se_kc)) {
		pr_err("cannot create channel events: %pe; %s\n", lrb_se_kc,
		       PTR_ERR(lrb_se_kc) == -EEXIST ?
		       "a channel of that name exists: unload its client first" :
		       "see the lrb messages above");
		return PTR_ERR(lrb_se_kc);
	}
	for (i = 0; i < count; i++)
		lost += lrb_sample_events_write(&lrb_se_cfg,
						lrb_kchan_chan(lrb_se_kc), i,
						text);
	pr_info("wrote %u records of each of %zu events, %u lost\n", count,
		ARRAY_SIZE(lrb_sample_events), lost);
	return 0;
}

static void __exit lrb_se_exit(void)
{
	lrb_kchan_destroy(lrb_se_kc);
}

module_init(lrb_se_init);
module_exit(lrb_se_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lrb sample: three events defined once with LRB_EVENT()");
