/* SPDX-License-Identifier: GPL-2.0 */
/* Stand-in: the system's errno values (the kernel's), see ../kport.h. */
#include_next <linux/errno.h>
#include "../kport.h"
