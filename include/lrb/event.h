/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb events defined once: LRB_EVENT() takes an event's name, id and
 * fields, and generates from that one description both the typed inline
 * write function and the event's description, from which the channel's
 * CTF 1.8 metadata declares the event (lib/metadata.c). The same header
 * serves kernel and user-space clients.
 *
 *	LRB_EVENT(io_done, 1,
 *		  LRB_INTEGER(uint64_t, seq),
 *		  LRB_INTEGER(uint16_t, data_len),
 *		  LRB_SEQUENCE(uint8_t, data, data_len));
 *
 * defines lrb_event_io_done (a struct lrb_event_desc to list in the
 * channel's events) and
 *
 *	int lrb_write_io_done(const struct lrb_config *cfg,
 *			      struct lrb_chan *chan, uint64_t seq,
 *			      uint16_t data_len, const uint8_t *data);
 *
 * which reserves the record once, stores the fields one after the other,
 * packed, in the CPU's byte order, and commits it; it returns as
 * lrb_reserve(). Each field is a parameter of the write function, in the
 * order of the fields. The payload size is a compile-time constant unless
 * the event has sequences or strings.
 *
 * Event ids are the caller's: any 32-bit value, unique in the channel.
 * Ids that do not fit in the compact header's id bits (0 to 30 with the
 * usual 27 timestamp bits) take the extended record header.
 */
#ifndef _LRB_EVENT_H
#define _LRB_EVENT_H

#include <lrb/lrb.h>
#include <lrb/metadata.h>

/*
 * Field declarations for LRB_EVENT(). Each expands to a tuple whose first
 * element names its kind; LRB_EVENT() expands every tuple once per thing
 * it generates.
 */

/**
 * LRB_INTEGER - an integer field
 * @type: its C type: a signed or unsigned integer type of 1, 2, 4 or 8
 *	bytes (uint8_t ... int64_t, int, pid_t, ...; u8 ... s64 in the kernel)
 * @name: field and parameter name
 */
#define LRB_INTEGER(type, name) (LRB__INTEGER, type, name)

/**
 * LRB_ENUM - an integer field whose values have names
 * @type: its C integer type, as for LRB_INTEGER()
 * @name: field and parameter name
 * @labels: a static array of struct lrb_enum_label (not a pointer)
 */
#define LRB_ENUM(type, name, labels) (LRB__ENUM, type, name, labels)

/**
 * LRB_FLOAT - a floating-point field (user space: the kernel has no FPU
 *	context in tracing code)
 * @type: float or double
 * @name: field and parameter name
 */
#define LRB_FLOAT(type, name) (LRB__FLOAT, type, name)

/**
 * LRB_ARRAY - a fixed number of integers; the parameter points to them
 * @type: element type, as for LRB_INTEGER()
 * @name: field and parameter name
 * @n: elements: a constant expression
 */
#define LRB_ARRAY(type, name, n) (LRB__ARRAY, type, name, n, false)

/**
 * LRB_ARRAY_TEXT - a fixed number of chars holding text (readers print a
 *	string, up to the first NUL)
 * @name: field and parameter name
 * @n: bytes: a constant expression
 */
#define LRB_ARRAY_TEXT(name, n) (LRB__ARRAY, char, name, n, true)

/**
 * LRB_SEQUENCE - integers counted by an earlier field; the parameter
 *	points to them
 * @type: element type, as for LRB_INTEGER()
 * @name: field and parameter name
 * @length: name of an earlier unsigned LRB_INTEGER() field: its
 *	parameter is the number of elements written
 */
#define LRB_SEQUENCE(type, name, length) (LRB__SEQUENCE, type, name, length, false)

/**
 * LRB_SEQUENCE_TEXT - chars holding text, counted by an earlier field
 * @name: field and parameter name
 * @length: name of an earlier unsigned LRB_INTEGER() field
 */
#define LRB_SEQUENCE_TEXT(name, length) (LRB__SEQUENCE, char, name, length, true)

/**
 * LRB_STRING - a NUL-terminated string; the parameter is a const char *,
 *	NULL written as "(null)"
 * @name: field and parameter name
 */
#define LRB_STRING(name) (LRB__STRING, char, name)

/*
 * Apply macro @m to each of up to 32 field tuples. The trailing 0 leaves
 * the "..." of LRB__NARG_() an argument even for one field, which ISO C
 * before C23 requires (-pedantic).
 */
#define LRB__CAT_(a, b) a##b
#define LRB__CAT(a, b) LRB__CAT_(a, b)
#define LRB__NARG(...)							\
	LRB__NARG_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23,	\
		   22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8,\
		   7, 6, 5, 4, 3, 2, 1, 0)
#define LRB__NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,\
		   _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24,  \
		   _25, _26, _27, _28, _29, _30, _31, _32, n, ...) n
#define LRB__EACH(m, ...) LRB__CAT(LRB__EACH_, LRB__NARG(__VA_ARGS__))(m, __VA_ARGS__)
#define LRB__EACH_1(m, f) m f
#define LRB__EACH_2(m, f, ...) m f LRB__EACH_1(m, __VA_ARGS__)
#define LRB__EACH_3(m, f, ...) m f LRB__EACH_2(m, __VA_ARGS__)
#define LRB__EACH_4(m, f, ...) m f LRB__EACH_3(m, __VA_ARGS__)
#define LRB__EACH_5(m, f, ...) m f LRB__EACH_4(m, __VA_ARGS__)
#define LRB__EACH_6(m, f, ...) m f LRB__EACH_5(m, __VA_ARGS__)
#define LRB__EACH_7(m, f, ...) m f LRB__EACH_6(m, __VA_ARGS__)
#define LRB__EACH_8(m, f, ...) m f LRB__EACH_7(m, __VA_ARGS__)
#define LRB__EACH_9(m, f, ...) m f LRB__EACH_8(m, __VA_ARGS__)
#define LRB__EACH_10(m, f, ...) m f LRB__EACH_9(m, __VA_ARGS__)
#define LRB__EACH_11(m, f, ...) m f LRB__EACH_10(m, __VA_ARGS__)
#define LRB__EACH_12(m, f, ...) m f LRB__EACH_11(m, __VA_ARGS__)
#define LRB__EACH_13(m, f, ...) m f LRB__EACH_12(m, __VA_ARGS__)
#define LRB__EACH_14(m, f, ...) m f LRB__EACH_13(m, __VA_ARGS__)
#define LRB__EACH_15(m, f, ...) m f LRB__EACH_14(m, __VA_ARGS__)
#define LRB__EACH_16(m, f, ...) m f LRB__EACH_15(m, __VA_ARGS__)
#define LRB__EACH_17(m, f, ...) m f LRB__EACH_16(m, __VA_ARGS__)
#define LRB__EACH_18(m, f, ...) m f LRB__EACH_17(m, __VA_ARGS__)
#define LRB__EACH_19(m, f, ...) m f LRB__EACH_18(m, __VA_ARGS__)
#define LRB__EACH_20(m, f, ...) m f LRB__EACH_19(m, __VA_ARGS__)
#define LRB__EACH_21(m, f, ...) m f LRB__EACH_20(m, __VA_ARGS__)
#define LRB__EACH_22(m, f, ...) m f LRB__EACH_21(m, __VA_ARGS__)
#define LRB__EACH_23(m, f, ...) m f LRB__EACH_22(m, __VA_ARGS__)
#define LRB__EACH_24(m, f, ...) m f LRB__EACH_23(m, __VA_ARGS__)
#define LRB__EACH_25(m, f, ...) m f LRB__EACH_24(m, __VA_ARGS__)
#define LRB__EACH_26(m, f, ...) m f LRB__EACH_25(m, __VA_ARGS__)
#define LRB__EACH_27(m, f, ...) m f LRB__EACH_26(m, __VA_ARGS__)
#define LRB__EACH_28(m, f, ...) m f LRB__EACH_27(m, __VA_ARGS__)
#define LRB__EACH_29(m, f, ...) m f LRB__EACH_28(m, __VA_ARGS__)
#define LRB__EACH_30(m, f, ...) m f LRB__EACH_29(m, __VA_ARGS__)
#define LRB__EACH_31(m, f, ...) m f LRB__EACH_30(m, __VA_ARGS__)
#define LRB__EACH_32(m, f, ...) m f LRB__EACH_31(m, __VA_ARGS__)

#define LRB__SIGNED(type) ((type)-1 < (type)1)

#ifdef __cplusplus
#define LRB__ASSERT(cond, msg) static_assert(cond, msg);
#else
#define LRB__ASSERT(cond, msg) _Static_assert(cond, msg);
#endif

/* The write function's parameters. */
#define LRB__PARAM(kind, ...) LRB__CAT(LRB__PARAM_, kind)(__VA_ARGS__)
#define LRB__PARAM_LRB__INTEGER(type, name) , type name
#define LRB__PARAM_LRB__ENUM(type, name, labels) , type name
#define LRB__PARAM_LRB__FLOAT(type, name) , type name
#define LRB__PARAM_LRB__ARRAY(type, name, n, text) , const type *name
#define LRB__PARAM_LRB__SEQUENCE(type, name, len, text) , const type *name
#define LRB__PARAM_LRB__STRING(type, name) , const char *name

/* Its declarations: compile-time checks and each string's length. */
#define LRB__DECL(kind, ...) LRB__CAT(LRB__DECL_, kind)(__VA_ARGS__)
#define LRB__DECL_INT(type, name)					\
	LRB__ASSERT(sizeof(type) == 1 || sizeof(type) == 2 ||		\
		    sizeof(type) == 4 || sizeof(type) == 8,		\
		    "lrb field " #name ": integers have 1, 2, 4 or 8 bytes")
#define LRB__DECL_LRB__INTEGER(type, name) LRB__DECL_INT(type, name)
#define LRB__DECL_LRB__ENUM(type, name, labels) LRB__DECL_INT(type, name)
#define LRB__DECL_LRB__FLOAT(type, name)				\
	LRB__ASSERT(sizeof(type) == 4 || sizeof(type) == 8,		\
		    "lrb field " #name ": use float or double")
#define LRB__DECL_LRB__ARRAY(type, name, n, text)			\
	LRB__DECL_INT(type, name)					\
	LRB__ASSERT((n) > 0, "lrb field " #name ": arrays have a constant length")
#define LRB__DECL_LRB__SEQUENCE(type, name, len, text)			\
	LRB__DECL_INT(type, name)					\
	LRB__ASSERT(!LRB__SIGNED(__typeof__(len)),			\
		    "lrb field " #name ": the length field is unsigned")
#define LRB__DECL_LRB__STRING(type, name)				\
	const char *__lrb_s_##name = (name) ? (name) : "(null)";	\
	unsigned long __lrb_n_##name = strlen(__lrb_s_##name);

/* The payload size: a sum of terms, constant for fixed-size fields. */
#define LRB__SIZE(kind, ...) LRB__CAT(LRB__SIZE_, kind)(__VA_ARGS__)
#define LRB__SIZE_LRB__INTEGER(type, name) + sizeof(type)
#define LRB__SIZE_LRB__ENUM(type, name, labels) + sizeof(type)
#define LRB__SIZE_LRB__FLOAT(type, name) + sizeof(type)
#define LRB__SIZE_LRB__ARRAY(type, name, n, text) + (unsigned long long)(n) * sizeof(type)
#define LRB__SIZE_LRB__SEQUENCE(type, name, len, text)		\
	+ (unsigned long long)(len) * sizeof(type)
#define LRB__SIZE_LRB__STRING(type, name) + (unsigned long long)__lrb_n_##name + 1

/* The stores into the reserved record. */
#define LRB__STORE(kind, ...) LRB__CAT(LRB__STORE_, kind)(__VA_ARGS__)
#define LRB__STORE_LRB__INTEGER(type, name)				\
	lrb_write(&__lrb_ctx, &(name), sizeof(type));
#define LRB__STORE_LRB__ENUM(type, name, labels)			\
	lrb_write(&__lrb_ctx, &(name), sizeof(type));
#define LRB__STORE_LRB__FLOAT(type, name)				\
	lrb_write(&__lrb_ctx, &(name), sizeof(type));
#define LRB__STORE_LRB__ARRAY(type, name, n, text)			\
	lrb_write(&__lrb_ctx, (name), (n) * sizeof(type));
#define LRB__STORE_LRB__SEQUENCE(type, name, len, text)		\
	if (len)							\
		lrb_write(&__lrb_ctx, (name), (size_t)(len) * sizeof(type));
/* the terminating NUL from here: the string may change meanwhile */
#define LRB__STORE_LRB__STRING(type, name)				\
	lrb_write(&__lrb_ctx, __lrb_s_##name, __lrb_n_##name);	\
	lrb_write(&__lrb_ctx, "", 1);

/*
 * The field descriptions, in the order of struct lrb_event_field's members
 * (name, kind, size, is_signed, text, length, length_field, labels,
 * nr_labels): positional, so that C++ compiles them too.
 */
#define LRB__DESC(kind, ...) LRB__CAT(LRB__DESC_, kind)(__VA_ARGS__)
#define LRB__DESC_LRB__INTEGER(type, f)				\
	{ #f, LRB_KIND_INTEGER, sizeof(type), LRB__SIGNED(type), false, 0,	\
	  NULL, NULL, 0 },
#define LRB__DESC_LRB__ENUM(type, f, l)				\
	{ #f, LRB_KIND_ENUM, sizeof(type), LRB__SIGNED(type), false, 0, NULL, \
	  (l), sizeof(l) / sizeof((l)[0]) },
#define LRB__DESC_LRB__FLOAT(type, f)					\
	{ #f, LRB_KIND_FLOAT, sizeof(type), true, false, 0, NULL, NULL, 0 },
#define LRB__DESC_LRB__ARRAY(type, f, n, txt)				\
	{ #f, LRB_KIND_ARRAY, sizeof(type), LRB__SIGNED(type), (txt), (n), NULL,\
	  NULL, 0 },
#define LRB__DESC_LRB__SEQUENCE(type, f, len, txt)			\
	{ #f, LRB_KIND_SEQUENCE, sizeof(type), LRB__SIGNED(type), (txt), 0, \
	  #len, NULL, 0 },
#define LRB__DESC_LRB__STRING(type, f)					\
	{ #f, LRB_KIND_STRING, 1, false, true, 0, NULL, NULL, 0 },

/**
 * LRB_EVENT - define an event: its write function and its description
 * @ev: event name, a C identifier: the event's name in the trace
 * @evid: event id, a constant unique in the channel
 * @...: its fields, 1 to 32 of LRB_INTEGER(), LRB_ENUM(), LRB_FLOAT(),
 *	LRB_ARRAY(), LRB_ARRAY_TEXT(), LRB_SEQUENCE(), LRB_SEQUENCE_TEXT()
 *	and LRB_STRING(), in payload order
 *
 * Defines lrb_event_<name>, the struct lrb_event_desc to list in the
 * channel's events (struct lrb_kchan_attr, struct lrb_metadata_attr), and
 * lrb_write_<name>(cfg, chan, <one parameter per field>), an inline
 * function that reserves the record, stores every field and commits it.
 * It returns 0 or lrb_reserve()'s error, which the buffer has counted as a
 * lost record; a payload beyond 4 GiB fails with -EMSGSIZE. Like
 * lrb_reserve(), it must not be called where it could sleep.
 *
 * Both are static: put LRB_EVENT(...); in a header that every file
 * writing or describing the event includes.
 */
#define LRB_EVENT(ev, evid, ...)					\
static const struct lrb_event_field lrb__fields_##ev[] = {		\
	LRB__EACH(LRB__DESC, __VA_ARGS__)				\
};									\
static inline __attribute__((__always_inline__)) int			\
lrb_write_##ev(const struct lrb_config *__lrb_cfg,			\
	       struct lrb_chan *__lrb_chan				\
	       LRB__EACH(LRB__PARAM, __VA_ARGS__))			\
{									\
	LRB__EACH(LRB__DECL, __VA_ARGS__)				\
	unsigned long long __lrb_len = 0 LRB__EACH(LRB__SIZE, __VA_ARGS__);\
	struct lrb_ctx __lrb_ctx __lrb_uninitialized;			\
	int __lrb_ret;							\
									\
	__lrb_ret = lrb_reserve(__lrb_cfg, __lrb_chan, &__lrb_ctx, (evid),\
				__lrb_len > 0xffffffffULL ? 0xffffffffU :\
				(unsigned int)__lrb_len);		\
	if (__builtin_expect(__lrb_ret, 0))				\
		return __lrb_ret;					\
	LRB__EACH(LRB__STORE, __VA_ARGS__)				\
	lrb_commit(__lrb_cfg, &__lrb_ctx);				\
	return 0;							\
}									\
static const struct lrb_event_desc lrb_event_##ev			\
	__attribute__((__unused__)) = {					\
	#ev, (evid), lrb__fields_##ev,					\
	sizeof(lrb__fields_##ev) / sizeof(lrb__fields_##ev[0])		\
}

#endif /* _LRB_EVENT_H */
