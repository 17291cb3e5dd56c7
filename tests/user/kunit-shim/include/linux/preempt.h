/* SPDX-License-Identifier: GPL-2.0 */
/* The user-space KUnit shim: what the suites use is in <kunit/test.h>. */
#include <kunit/test.h>
