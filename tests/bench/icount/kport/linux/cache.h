/* SPDX-License-Identifier: GPL-2.0 */
/* Stand-in for the kernel header of this name: see ../kport.h. */
#include "../kport.h"
