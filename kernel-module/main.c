// SPDX-License-Identifier: GPL-2.0
/*
 * lrb.ko: the lrb core as a module. The core exports its API to client
 * modules; the per-CPU files come here.
 */
#include <linux/module.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lrb: lockless per-CPU ring buffers");
