/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LTTng-UST tracepoint provider of the user-space benchmark: one event,
 * lrb_bench:record, carrying the 16 bytes liblrb records (struct
 * bench_payload) as an array of bytes, which LTTng-UST copies with one
 * memcpy as lrb_write() does. tp.c builds the probe; lttng.c calls it.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER lrb_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "tp.h"

#if !defined(_BENCH_USER_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define _BENCH_USER_TP_H

#include <lttng/tracepoint.h>
#include "bench.h"

LTTNG_UST_TRACEPOINT_EVENT(lrb_bench, record,
	LTTNG_UST_TP_ARGS(const struct bench_payload *, p),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_array(uint8_t, payload, (const uint8_t *)p,
				      sizeof(struct bench_payload))
	)
)

#endif /* _BENCH_USER_TP_H */

#include <lttng/tracepoint-event.h>
