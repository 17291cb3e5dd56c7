// SPDX-License-Identifier: GPL-2.0
/*
 * The probe of tp.h's tracepoint provider, linked into bench-user
 * (LTTng-UST's static linking method).
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE

#include "tp.h"
