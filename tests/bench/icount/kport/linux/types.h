/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stand-in: the uapi types (__u32...) of the system header, and the kernel
 * ones of ../kport.h.
 */
#include_next <linux/types.h>
#include "../kport.h"
