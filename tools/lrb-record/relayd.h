/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The subset of lttng-relayd's protocol (LTTng 2.11 to 2.13, protocol
 * version 2.13) that lrb-record speaks, as lttng-sessiond and
 * lttng-consumerd speak it: the message layouts of lttng-tools'
 * src/common/sessiond-comm/relayd.h, written again from that description.
 * Every integer is big-endian; every structure is packed.
 * Documentation/tools/lrb-record.rst lists what is and is not used.
 */
#ifndef _LRB_RECORD_RELAYD_H
#define _LRB_RECORD_RELAYD_H

#include <linux/types.h>

#define RLY_MAJOR 2U
#define RLY_MINOR 13U
/* The first minor version with trace chunks and these message layouts. */
#define RLY_MINOR_MIN 11U

/* lttng-relayd's default ports: control, data, live viewers */
#define RLY_PORT_CONTROL 5342U
#define RLY_PORT_DATA 5343U
#define RLY_PORT_LIVE 5344U

/* enum lttcomm_relayd_command */
enum rly_cmd {
	RLY_ADD_STREAM = 1,
	RLY_CREATE_SESSION = 2,
	RLY_VERSION = 5,
	RLY_SEND_METADATA = 6,
	RLY_CLOSE_STREAM = 7,
	RLY_DATA_PENDING = 8,
	RLY_QUIESCENT_CONTROL = 9,
	RLY_BEGIN_DATA_PENDING = 10,
	RLY_END_DATA_PENDING = 11,
	RLY_SEND_INDEX = 13,
	RLY_STREAMS_SENT = 16,
	RLY_CREATE_TRACE_CHUNK = 19,
};

/* LTTNG_OK of enum lttng_error_code */
#define RLY_OK 10U

/* Every command on the control connection starts with this. */
struct rly_hdr {
	__u64 circuit_id;
	__u64 data_size;
	__u32 cmd;
	__u32 cmd_version;
} __attribute__((packed));

/* Every packet on the data connection starts with this. */
struct rly_data_hdr {
	__u64 circuit_id;
	__u64 stream_id;
	__u64 net_seq_num;
	__u32 data_size;
	__u32 padding_size;
} __attribute__((packed));

struct rly_version {
	__u32 major;
	__u32 minor;
} __attribute__((packed));

/* Followed by session name, hostname and base path, each NUL-terminated. */
struct rly_create_session {
	__u32 session_name_len;
	__u32 hostname_len;
	__u32 base_path_len;
	__u32 live_timer;
	__u8 snapshot;
	__u8 session_name_contains_creation_time;
	__u8 sessiond_uuid[16];
	__u64 session_id;
	__u64 creation_time;
	__u8 current_chunk_id_is_set;
	__u64 current_chunk_id;
} __attribute__((packed));

/* Followed by output_path_length bytes of path. */
struct rly_create_session_reply {
	__u64 session_id;
	__u32 ret_code;
	__u32 output_path_length;
} __attribute__((packed));

struct rly_create_trace_chunk {
	__u64 chunk_id;
	__u64 creation_timestamp;
	__u32 override_name_length;
} __attribute__((packed));

/* Followed by channel name and path name, each NUL-terminated. */
struct rly_add_stream {
	__u32 channel_name_len;
	__u32 pathname_len;
	__u64 tracefile_size;
	__u64 tracefile_count;
	__u64 trace_chunk_id;
} __attribute__((packed));

struct rly_stream_reply {
	__u64 handle;
	__u32 ret_code;
} __attribute__((packed));

struct rly_generic_reply {
	__u32 ret_code;
} __attribute__((packed));

/* Followed by the metadata text and padding_size zero bytes. */
struct rly_metadata {
	__u64 stream_id;
	__u32 padding_size;
} __attribute__((packed));

struct rly_close_stream {
	__u64 stream_id;
	__u64 last_net_seq_num;
} __attribute__((packed));

/*
 * DATA_PENDING: relayd answers 0 if it has written the stream's packets
 * up to @last_net_seq_num (data and index, each with write(2)), 1 if
 * not yet, -1 (all ones) for a stream it does not know.
 */
struct rly_data_pending {
	__u64 stream_id;
	__u64 last_net_seq_num;
} __attribute__((packed));

/*
 * BEGIN_ and END_DATA_PENDING: relayd's session id (the one it answered
 * CREATE_SESSION with). END answers 1 if a stream of the session neither
 * had DATA_PENDING or QUIESCENT_CONTROL since BEGIN nor has all its data
 * written and is closed, else 0.
 */
struct rly_data_pending_session {
	__u64 session_id;
} __attribute__((packed));

/*
 * QUIESCENT_CONTROL for the metadata stream: relayd has handled every
 * command before it, so SEND_METADATA (which has no answer) is written.
 */
struct rly_quiescent_control {
	__u64 stream_id;
} __attribute__((packed));

/*
 * One packet's index entry (struct lttcomm_relayd_index, CTF index 1.1).
 * Sizes in bits. A live beacon has packet_size 0, timestamp_end the
 * stream's current time and stream_id set, the rest 0.
 */
struct rly_index {
	__u64 relay_stream_id;
	__u64 net_seq_num;
	__u64 packet_size;
	__u64 content_size;
	__u64 timestamp_begin;
	__u64 timestamp_end;
	__u64 events_discarded;
	__u64 stream_id;
	__u64 stream_instance_id;
	__u64 packet_seq_num;
} __attribute__((packed));

#endif /* _LRB_RECORD_RELAYD_H */
