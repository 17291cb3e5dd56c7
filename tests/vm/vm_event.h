/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event the VM test client (tests/vm/client) writes, defined once:
 * its write function and its description for the channel's metadata. The
 * payload is struct lrb_vm_record's fields (tests/vm/vm_record.h, which the
 * checkers decode it with) followed by the data.
 */
#ifndef _LRB_VM_EVENT_H
#define _LRB_VM_EVENT_H

#include <lrb/event.h>
#include "vm_record.h"

LRB_EVENT(lrb_vm_record, LRB_VM_EVENT_ID,
	  LRB_INTEGER(uint64_t, seq),
	  LRB_INTEGER(uint32_t, cpu),
	  LRB_INTEGER(uint16_t, data_len),
	  LRB_INTEGER(uint8_t, ctx),
	  LRB_INTEGER(uint8_t, zero),
	  LRB_INTEGER(uint32_t, csum),
	  LRB_SEQUENCE(uint8_t, data, data_len));

#endif /* _LRB_VM_EVENT_H */
