// SPDX-License-Identifier: GPL-2.0
/*
 * The tools' port layer: the allocation lib/region.c needs (see
 * lib/port.h), for programs that link the core's decoding files
 * (Makefile's TOOL_LIB) without liblrb and its liburcu.
 */
#include <stdlib.h>

#include "../../lib/port.h"

void *__lrb_port_zalloc(unsigned long size, int node)
{
	(void)node;
	return calloc(1, size);
}

void __lrb_port_free(void *p)
{
	free(p);
}
