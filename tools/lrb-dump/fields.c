// SPDX-License-Identifier: GPL-2.0
/*
 * Event payloads: one walker over a payload's fields, as the metadata
 * lays them out, that measures the payload (the record decoder's
 * payload_size callback) or prints it. Bit offsets are relative to the
 * packet start, as CTF alignment is; every read is checked against the
 * end of the packet content, and the work per payload is bounded by its
 * size, whatever the metadata says.
 */
#include "dump.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* A struct being walked: sequences find their length among its fields. */
struct frame {
	const struct dump_type *st;
	unsigned int base;	/* its values start at walk.vals[base] */
	unsigned int cur;	/* the field being read: those before it are */
};

struct walk {
	const unsigned char *pkt;
	bool big_endian;		/* the trace's byte order */
	unsigned long long limit;	/* first bit past the readable bytes */
	unsigned long long budget;	/* nodes left to visit */
	struct frame frames[DUMP_MAX_DEPTH + 1];
	unsigned int depth;
	unsigned int nr_vals;
	unsigned long long vals[DUMP_MAX_SCOPE];
	FILE *out;			/* NULL: measure only */
	bool json;
	char *err;
	size_t errlen;
	unsigned long long err_bit;
};

static int walk_fail(struct walk *w, unsigned long long bit, const char *name,
		     const char *what)
{
	snprintf(w->err, w->errlen, "field '%.60s': %s", name, what);
	w->err_bit = bit;
	return -1;
}

static unsigned long long align_up(unsigned long long v, unsigned int a)
{
	return (v + a - 1) & ~(unsigned long long)(a - 1);
}

/* Align *@bit for @t and check that @bits more are readable. */
static int reserve(struct walk *w, const struct dump_type *t,
		   unsigned long long *bit, unsigned long long bits,
		   const char *name)
{
	unsigned long long at = align_up(*bit, t->align);

	if (at < *bit || at > w->limit || bits > w->limit - at)
		return walk_fail(w, *bit, name,
				 "extends past the end of the packet content");
	*bit = at;
	return 0;
}

/*
 * Big-endian integer of @size bits at bit @bit: CTF numbers the bits of a
 * big-endian field from the most significant bit of each byte.
 */
static unsigned long long read_bits_be(const unsigned char *p,
				       unsigned long long bit,
				       unsigned int size)
{
	unsigned long long v = 0;
	unsigned int got;

	if (!(bit % 8) && !(size % 8)) {
		for (got = 0; got < size; got += 8)
			v = v << 8 | p[bit / 8 + got / 8];
		return v;
	}
	for (got = 0; got < size;) {
		unsigned int shift = bit % 8, n = 8 - shift;

		if (n > size - got)
			n = size - got;
		v = v << n | ((p[bit / 8] >> (8 - shift - n)) & ((1U << n) - 1));
		got += n;
		bit += n;
	}
	return v;
}

/*
 * Integer @t at bit @bit (checked by the caller), in its byte order: its
 * own, or the trace's.
 */
static unsigned long long read_bits(const struct walk *w,
				    const struct dump_type *t,
				    unsigned long long bit)
{
	const unsigned char *p = w->pkt;
	unsigned int size = t->size;
	unsigned long long v = 0;
	unsigned int got = 0;

	if (t->order == DUMP_ORDER_BE ||
	    (t->order == DUMP_ORDER_TRACE && w->big_endian))
		return read_bits_be(p, bit, size);
	if (!(bit % 8) && !(size % 8)) {
		for (got = 0; got < size; got += 8)
			v |= (unsigned long long)p[bit / 8 + got / 8] << got;
		return v;
	}
	while (got < size) {
		unsigned int shift = bit % 8, n = 8 - shift;

		if (n > size - got)
			n = size - got;
		v |= (unsigned long long)((p[bit / 8] >> shift) &
					  ((1U << n) - 1)) << got;
		got += n;
		bit += n;
	}
	return v;
}

static long long sign_extend(unsigned long long v, unsigned int size)
{
	if (size < 64 && (v >> (size - 1)) & 1)
		v |= ~0ULL << size;
	return (long long)v;
}

static void print_string(FILE *f, const unsigned char *s, size_t len,
			 bool json)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, json ? "\\u%04x" : "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void print_int(struct walk *w, const struct dump_type *t,
		      unsigned long long v)
{
	unsigned int i;

	if (t->sign && (w->json || t->base == DUMP_BASE_DEC)) {
		fprintf(w->out, "%lld", sign_extend(v, t->size));
		return;
	}
	if (w->json || t->base == DUMP_BASE_DEC) {
		fprintf(w->out, "%llu", v);
		return;
	}
	if (t->size < 64)
		v &= (1ULL << t->size) - 1;
	switch (t->base) {
	case DUMP_BASE_HEX:
		fprintf(w->out, "0x%llx", v);
		break;
	case DUMP_BASE_OCT:
		fprintf(w->out, "0%llo", v);
		break;
	default:
		fputs("0b", w->out);
		for (i = t->size; i-- > 1 && !(v >> i);)
			;
		for (i++; i-- > 0;)
			fputc('0' + ((v >> i) & 1), w->out);
		break;
	}
}

/* As babeltrace2 prints it (%g); JSON has no inf or nan: null. */
static void print_float(struct walk *w, const struct dump_type *t,
			unsigned long long raw)
{
	uint32_t r32 = raw;
	double d;
	float f;

	if (t->size == 32) {
		memcpy(&f, &r32, sizeof(f));
		d = f;
	} else {
		memcpy(&d, &raw, sizeof(d));
	}
	if (w->json && !isfinite(d))
		fputs("null", w->out);
	else
		fprintf(w->out, w->json ? "%.17g" : "%g", d);
}

static void print_enum(struct walk *w, const struct dump_type *t,
		       unsigned long long raw)
{
	long long v = t->sign ? sign_extend(raw, t->size) : (long long)raw;
	const char *label = NULL;
	unsigned int i;

	for (i = 0; i < t->nr_entries && !label; i++) {
		const struct dump_enum_entry *e = &t->entries[i];

		if (t->sign ? e->lo <= v && v <= e->hi :
			      (unsigned long long)e->lo <= raw &&
			      raw <= (unsigned long long)e->hi)
			label = e->label;
	}
	if (w->json) {
		fputs("{\"label\":", w->out);
		if (label)
			print_string(w->out, (const void *)label, strlen(label),
				     true);
		else
			fputs("null", w->out);
		fputs(",\"value\":", w->out);
		print_int(w, t, raw);
		fputc('}', w->out);
		return;
	}
	if (label)
		fputs(label, w->out);
	fputc('(', w->out);
	print_int(w, t, raw);
	fputc(')', w->out);
}

static int walk_type(struct walk *w, const struct dump_type *t,
		     unsigned long long *bit, const char *name);

/* The value of the length field of a sequence: the nearest in scope. */
static int seq_length(struct walk *w, const struct dump_type *t,
		      unsigned long long bit, const char *name,
		      unsigned long long *len)
{
	unsigned int d, i;

	for (d = w->depth; d-- > 0;) {
		const struct frame *fr = &w->frames[d];

		for (i = 0; i < fr->cur; i++) {
			/* lookups count: a long scope in a long array is work */
			if (!w->budget--)
				return walk_fail(w, bit, name,
						 "too many fields for the payload's size");
			if (!strcmp(fr->st->fields[i].name, t->length_name)) {
				*len = w->vals[fr->base + i];
				return 0;
			}
		}
	}
	return walk_fail(w, bit, name, "sequence length field not found");
}

/* Arrays and sequences of @n elements. */
static int walk_array(struct walk *w, const struct dump_type *t,
		      unsigned long long n, unsigned long long *bit,
		      const char *name)
{
	const struct dump_type *e = t->elem;
	unsigned long long i, stride, need;

	if (reserve(w, t, bit, 0, name))
		return -1;
	if (e->fixed && n) {
		stride = align_up(e->bits, e->align);
		/* elements of no size cost their visits, not bytes */
		if (!stride && n > w->budget)
			return walk_fail(w, *bit, name,
					 "too many elements for the payload's size");
		/* the size is known: check it before visiting anything */
		if (stride && n - 1 > (w->limit - *bit) / stride)
			return walk_fail(w, *bit, name,
					 "extends past the end of the packet content");
		need = stride * (n - 1) + e->bits;
		if (need > w->limit - *bit)
			return walk_fail(w, *bit, name,
					 "extends past the end of the packet content");
		if (!w->out) {
			*bit += need;
			return 0;
		}
	}
	if (w->out && e->kind == DUMP_INT && e->text && e->size == 8 &&
	    e->align <= 8 && !(*bit % 8)) {
		/* text: up to the first NUL, like babeltrace2 */
		const unsigned char *s = w->pkt + *bit / 8, *nul;

		nul = memchr(s, 0, n);
		print_string(w->out, s, nul ? (size_t)(nul - s) : n, w->json);
		*bit += 8 * n;
		return 0;
	}
	if (w->out)
		fputc('[', w->out);
	for (i = 0; i < n; i++) {
		if (!w->budget--)
			return walk_fail(w, *bit, name,
					 "too many elements for the payload's size");
		if (w->out && i)
			fputc(',', w->out);
		if (walk_type(w, e, bit, name))
			return -1;
	}
	if (w->out)
		fputc(']', w->out);
	return 0;
}

static int walk_struct(struct walk *w, const struct dump_type *t,
		       unsigned long long *bit, const char *name, bool top)
{
	struct frame *fr;
	unsigned int i;

	if (reserve(w, t, bit, 0, name))
		return -1;
	if (w->depth > DUMP_MAX_DEPTH ||
	    t->nr_fields > DUMP_MAX_SCOPE - w->nr_vals)
		return walk_fail(w, *bit, name, "nested too deeply");
	fr = &w->frames[w->depth++];
	fr->st = t;
	fr->base = w->nr_vals;
	w->nr_vals += t->nr_fields;
	if (w->out && !top)
		fputc('{', w->out);
	for (i = 0; i < t->nr_fields; i++) {
		const struct dump_field *f = &t->fields[i];

		fr->cur = i;
		if (w->out) {
			if (w->json) {
				fputs(i ? ",\"" : "\"", w->out);
				fputs(f->name, w->out);
				fputs("\":", w->out);
			} else {
				if (i)
					fputc(' ', w->out);
				fputs(f->name, w->out);
				fputc('=', w->out);
			}
		}
		w->vals[fr->base + i] = 0;
		if (f->type->kind == DUMP_INT || f->type->kind == DUMP_ENUM) {
			unsigned long long at = *bit;

			if (walk_type(w, f->type, bit, f->name))
				return -1;
			at = align_up(at, f->type->align);
			w->vals[fr->base + i] = read_bits(w, f->type, at);
		} else if (walk_type(w, f->type, bit, f->name)) {
			return -1;
		}
	}
	if (w->out && !top)
		fputc('}', w->out);
	w->depth--;
	w->nr_vals = fr->base;
	return 0;
}

static int walk_type(struct walk *w, const struct dump_type *t,
		     unsigned long long *bit, const char *name)
{
	unsigned long long n;
	const unsigned char *s, *nul;

	if (!w->budget--)
		return walk_fail(w, *bit, name,
				 "too many fields for the payload's size");
	switch (t->kind) {
	case DUMP_INT:
	case DUMP_ENUM:
	case DUMP_FLOAT:
		if (reserve(w, t, bit, t->size, name))
			return -1;
		if (w->out) {
			n = read_bits(w, t, *bit);
			if (t->kind == DUMP_ENUM)
				print_enum(w, t, n);
			else if (t->kind == DUMP_FLOAT)
				print_float(w, t, n);
			else
				print_int(w, t, n);
		}
		*bit += t->size;
		return 0;
	case DUMP_STRING:
		if (reserve(w, t, bit, 8, name))
			return -1;
		s = w->pkt + *bit / 8;
		nul = memchr(s, 0, (w->limit - *bit) / 8);
		if (!nul)
			return walk_fail(w, *bit, name,
					 "string without its NUL before the end of the packet content");
		if (w->out)
			print_string(w->out, s, nul - s, w->json);
		*bit += 8 * (nul - s + 1);
		return 0;
	case DUMP_STRUCT:
		if (t->fixed && !w->out) {
			if (reserve(w, t, bit, t->bits, name))
				return -1;
			*bit += t->bits;
			return 0;
		}
		return walk_struct(w, t, bit, name, false);
	case DUMP_ARRAY:
		return walk_array(w, t, t->length, bit, name);
	case DUMP_SEQUENCE:
		if (seq_length(w, t, *bit, name, &n))
			return -1;
		return walk_array(w, t, n, bit, name);
	case DUMP_VARIANT:
		break;
	}
	return walk_fail(w, *bit, name, "variant in a payload");
}

/*
 * A walk of the @len bytes at @payload in @packet. Its budget comes from
 * @avail, the bytes readable there when it was measured, so that printing
 * visits what measuring accepted.
 */
static void walk_init(struct walk *w, const struct dump_event *ev,
		      const unsigned char *packet, unsigned long payload,
		      unsigned long len, unsigned long avail)
{
	w->pkt = packet;
	w->big_endian = ev->stream->big_endian;
	w->limit = 8ULL * (payload + (unsigned long long)len);
	w->budget = 64ULL * avail + 4096;
	w->depth = 0;
	w->nr_vals = 0;
	w->out = NULL;
	w->json = false;
}

long dump_payload_size(const struct dump_event *ev,
		       const unsigned char *packet, unsigned long payload,
		       unsigned long avail, char *err, size_t errlen,
		       unsigned long *err_off)
{
	unsigned long long bit = 8ULL * payload;
	struct walk w;

	if (!ev->fields)
		return 0;
	walk_init(&w, ev, packet, payload, avail, avail);
	w.err = err;
	w.errlen = errlen;
	if (walk_struct(&w, ev->fields, &bit, "fields", true)) {
		*err_off = w.err_bit / 8;
		return -1;
	}
	/* records end on a byte: CTF readers would look for one in the rest */
	if (bit % 8) {
		snprintf(err, errlen, "the payload ends inside a byte (bit %llu of it): its fields must add up to whole bytes",
			 bit % 8);
		*err_off = bit / 8;
		return -1;
	}
	return bit / 8 - payload;
}

long dump_recover_payload_size(const struct lrb_decoder *dec, u32 id,
			       const u8 *payload, unsigned long avail)
{
	const struct dump_recover_ctx *rc = dec->priv;
	const struct dump_event *ev = dump_meta_event(rc->meta, rc->sc, id);
	/* packets start on a page: field alignment is the same from there */
	unsigned long off = (unsigned long)payload & (PAGE_SIZE - 1);
	unsigned long err_off;
	char err[160];

	if (!ev)
		return -1;
	return dump_payload_size(ev, payload - off, off, avail, err,
				 sizeof(err), &err_off);
}

/* The payload was measured by the stream cursor: this cannot fail but for bugs. */
void dump_print_fields(FILE *f, const struct dump_item *item, bool json)
{
	unsigned long long bit = 8ULL * item->payload;
	char err[128];
	struct walk w;

	if (!item->event->fields)
		return;
	walk_init(&w, item->event, item->packet, item->payload, item->len,
		  item->avail);
	w.out = f;
	w.json = json;
	w.err = err;
	w.errlen = sizeof(err);
	if (walk_struct(&w, item->event->fields, &bit, "fields", true))
		fprintf(f, json ? ",\"error\":\"%s\"" : " (error: %s)", err);
}
