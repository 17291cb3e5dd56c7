/* SPDX-License-Identifier: GPL-2.0 */
/* The user-space KUnit shim: see <kunit/kernel.h>. */
#include <kunit/kernel.h>
