// SPDX-License-Identifier: GPL-2.0
/*
 * TSDL type specifiers: integer, enum, string, struct, variant, arrays
 * and sequences, and typealias names. Each type gets its alignment, its
 * size when it does not depend on the data, its height and its node
 * count here, so that the limits of dump.h are enforced as it is built.
 */
#include "tsdl.h"

#include <limits.h>
#include <string.h>

static const char *const type_keywords[] = {
	"integer", "string", "enum", "struct", "variant", "floating_point",
};

static bool is_type_keyword(const struct tok *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(type_keywords); i++)
		if (tsdl_is_ident(t, type_keywords[i]))
			return true;
	return false;
}

static unsigned int alias_hash(const char *s)
{
	unsigned int h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % TSDL_ALIAS_BUCKETS;
}

void tsdl_alias_add(struct tsdl *p, const char *name,
		    const struct dump_type *type, unsigned int line)
{
	struct tsdl_alias *a;
	unsigned int h = alias_hash(name);

	if (tsdl_alias_find(p, name))
		tsdl_fail(p, line, "type '%.60s' is declared twice", name);
	a = tsdl_alloc(p, sizeof(*a));
	a->name = name;
	a->type = type;
	a->next = p->aliases[h];
	p->aliases[h] = a;
}

const struct dump_type *tsdl_alias_find(struct tsdl *p, const char *name)
{
	struct tsdl_alias *a;

	for (a = p->aliases[alias_hash(name)]; a; a = a->next)
		if (!strcmp(a->name, name))
			return a->type;
	return NULL;
}

const char *tsdl_alias_words(struct tsdl *p, bool keep_last, const char **last)
{
	const char *words[16];
	unsigned int n = 0, i, k;
	size_t len = 0;
	char *name;

	while (p->cur.kind == TOK_IDENT) {
		if (n == ARRAY_SIZE(words))
			tsdl_fail(p, p->cur.line, "type name of too many words");
		words[n++] = p->cur.text;
		len += strlen(p->cur.text) + 1;
		tsdl_next(p);
	}
	if (keep_last) {
		if (n < 2) {
			char buf[64];

			tsdl_fail(p, p->cur.line,
				  n ? "expected a type and a field name, found %s after '%s'"
				    : "expected a type, found %s%s",
				  tsdl_tok_desc(p, buf, sizeof(buf)),
				  n ? words[0] : "");
		}
		*last = words[--n];
	}
	if (!n) {
		char buf[64];

		tsdl_fail(p, p->cur.line, "expected a type, found %s",
			  tsdl_tok_desc(p, buf, sizeof(buf)));
	}
	name = tsdl_alloc(p, len + 1);
	for (i = 0, k = 0; i < n; i++) {
		if (i)
			name[k++] = ' ';
		memcpy(name + k, words[i], strlen(words[i]));
		k += strlen(words[i]);
	}
	name[k] = 0;
	return name;
}

static struct dump_type *new_type(struct tsdl *p, enum dump_kind kind)
{
	struct dump_type *t = tsdl_alloc(p, sizeof(*t));

	t->kind = kind;
	t->align = 1;
	t->nodes = 1;
	t->height = 1;
	return t;
}

static unsigned long add_nodes(unsigned long a, unsigned long b)
{
	return a + b > DUMP_MAX_NODES ? DUMP_MAX_NODES + 1 : a + b;
}

/* Account for @child under @t: height and node count. */
static void adopt(struct tsdl *p, struct dump_type *t,
		  const struct dump_type *child, unsigned int line)
{
	if (child->height + 1 > t->height)
		t->height = child->height + 1;
	if (t->height > DUMP_MAX_DEPTH)
		tsdl_fail(p, line, "types nested more than %d deep",
			  DUMP_MAX_DEPTH);
	t->nodes = add_nodes(t->nodes, child->nodes);
}

static unsigned long long align_up(unsigned long long v, unsigned int a)
{
	return (v + a - 1) & ~(unsigned long long)(a - 1);
}

/* An attribute value: number (possibly negative), string or dotted name. */
struct attr_value {
	enum tok_kind kind;
	bool neg;
	unsigned long long value;
	const char *text;
	unsigned int line;
};

static void attr_value(struct tsdl *p, struct attr_value *v)
{
	char buf[64];

	memset(v, 0, sizeof(*v));
	v->line = p->cur.line;
	if (tsdl_is_punct(&p->cur, '-') || tsdl_is_punct(&p->cur, '+')) {
		v->neg = p->cur.punct == '-';
		tsdl_next(p);
		if (p->cur.kind != TOK_INT)
			tsdl_fail(p, p->cur.line, "expected a number after the sign");
	}
	v->kind = p->cur.kind;
	switch (p->cur.kind) {
	case TOK_INT:
		v->value = p->cur.value;
		tsdl_next(p);
		return;
	case TOK_STRING:
		v->text = p->cur.text;
		tsdl_next(p);
		return;
	case TOK_IDENT:
		v->text = tsdl_alias_words(p, false, NULL);
		/* dotted names (clock.lrb_clock.value) */
		while (tsdl_is_punct(&p->cur, '.')) {
			const char *more;
			char *joined;
			size_t a, b;

			tsdl_next(p);
			more = tsdl_expect_ident(p, "a name after '.'");
			a = strlen(v->text);
			b = strlen(more);
			joined = tsdl_alloc(p, a + b + 2);
			memcpy(joined, v->text, a);
			joined[a] = '.';
			memcpy(joined + a + 1, more, b + 1);
			v->text = joined;
		}
		return;
	default:
		tsdl_fail(p, p->cur.line, "expected a value, found %s",
			  tsdl_tok_desc(p, buf, sizeof(buf)));
	}
}

static unsigned long long attr_uint(struct tsdl *p, const struct attr_value *v,
				    const char *key, unsigned long long max)
{
	if (v->kind != TOK_INT || v->neg || v->value > max)
		tsdl_fail(p, v->line, "%s must be a number from 0 to %llu", key,
			  max);
	return v->value;
}

static bool attr_bool(struct tsdl *p, const struct attr_value *v,
		      const char *key)
{
	if (v->kind == TOK_INT && !v->neg && v->value <= 1)
		return v->value;
	if (v->kind == TOK_IDENT && (!strcmp(v->text, "true") ||
				     !strcmp(v->text, "TRUE")))
		return true;
	if (v->kind == TOK_IDENT && (!strcmp(v->text, "false") ||
				     !strcmp(v->text, "FALSE")))
		return false;
	tsdl_fail(p, v->line, "%s must be true or false", key);
}

static bool word_in(const char *w, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(w, *list))
			return true;
	return false;
}

static enum dump_base attr_base(struct tsdl *p, const struct attr_value *v)
{
	static const char *const dec[] = { "decimal", "dec", "d", "i", "u", NULL };
	static const char *const hex[] = { "hexadecimal", "hex", "x", "X", "p",
					   "pointer", NULL };
	static const char *const oct[] = { "octal", "oct", "o", NULL };
	static const char *const bin[] = { "binary", "bin", "b", NULL };

	if (v->kind == TOK_INT && !v->neg) {
		switch (v->value) {
		case 10:
			return DUMP_BASE_DEC;
		case 16:
			return DUMP_BASE_HEX;
		case 8:
			return DUMP_BASE_OCT;
		case 2:
			return DUMP_BASE_BIN;
		}
	} else if (v->kind == TOK_IDENT) {
		if (word_in(v->text, dec))
			return DUMP_BASE_DEC;
		if (word_in(v->text, hex))
			return DUMP_BASE_HEX;
		if (word_in(v->text, oct))
			return DUMP_BASE_OCT;
		if (word_in(v->text, bin))
			return DUMP_BASE_BIN;
	}
	tsdl_fail(p, v->line, "base must be 2, 8, 10 or 16 (or a name of one)");
}

static const struct dump_clock *attr_clock(struct tsdl *p,
					   const struct attr_value *v)
{
	const char *name;
	size_t len;
	unsigned int i;

	if (v->kind != TOK_IDENT || strncmp(v->text, "clock.", 6))
		goto bad;
	name = v->text + 6;
	len = strlen(name);
	if (len < 7 || strcmp(name + len - 6, ".value"))
		goto bad;
	len -= 6;
	for (i = 0; i < p->nr_clocks; i++)
		if (strlen(p->clocks[i]->name) == len &&
		    !strncmp(p->clocks[i]->name, name, len))
			return p->clocks[i];
	tsdl_fail(p, v->line, "map names clock '%.*s', which is not declared before",
		  (int)(len > 60 ? 60 : len), name);
bad:
	tsdl_fail(p, v->line, "map must be clock.<name>.value");
}

/* Seen attributes, so that each is given at most once. */
#define SEEN(bit) do {							\
	if (seen & (1U << (bit)))					\
		tsdl_fail(p, line, "attribute '%s' given twice", key);	\
	seen |= 1U << (bit);						\
} while (0)

static const struct dump_type *parse_integer(struct tsdl *p)
{
	struct dump_type *t = new_type(p, DUMP_INT);
	unsigned int seen = 0, line = p->cur.line;
	bool have_align = false;

	tsdl_next(p);
	tsdl_expect_punct(p, '{', "'{' after integer");
	while (!tsdl_is_punct(&p->cur, '}')) {
		const char *key = tsdl_expect_ident(p, "an integer attribute");
		struct attr_value v;

		line = p->cur.line;
		tsdl_expect_punct(p, '=', "'=' after an attribute name");
		attr_value(p, &v);
		if (!strcmp(key, "size")) {
			SEEN(0);
			t->size = attr_uint(p, &v, "size", 64);
			if (!t->size)
				tsdl_fail(p, line, "size must be from 1 to 64");
		} else if (!strcmp(key, "align")) {
			SEEN(1);
			t->align = attr_uint(p, &v, "align", 4096);
			if (!t->align || (t->align & (t->align - 1)))
				tsdl_fail(p, line, "align must be a power of two (bits), at most 4096");
			have_align = true;
		} else if (!strcmp(key, "signed")) {
			SEEN(2);
			t->sign = attr_bool(p, &v, "signed");
		} else if (!strcmp(key, "byte_order")) {
			SEEN(3);
			if (v.kind == TOK_IDENT && !strcmp(v.text, "le"))
				t->order = DUMP_ORDER_LE;
			else if (v.kind == TOK_IDENT &&
				 (!strcmp(v.text, "be") || !strcmp(v.text, "network")))
				t->order = DUMP_ORDER_BE;
			else if (v.kind != TOK_IDENT || strcmp(v.text, "native"))
				tsdl_fail(p, line, "byte_order must be le, be, network or native");
		} else if (!strcmp(key, "base")) {
			SEEN(4);
			t->base = attr_base(p, &v);
		} else if (!strcmp(key, "encoding")) {
			SEEN(5);
			if (v.kind != TOK_IDENT)
				tsdl_fail(p, line, "encoding must be none, UTF8 or ASCII");
			if (!strcmp(v.text, "UTF8") || !strcmp(v.text, "ASCII") ||
			    !strcmp(v.text, "utf8") || !strcmp(v.text, "ascii"))
				t->text = true;
			else if (strcmp(v.text, "none"))
				tsdl_fail(p, line, "encoding must be none, UTF8 or ASCII");
		} else if (!strcmp(key, "map")) {
			SEEN(6);
			t->clock = attr_clock(p, &v);
		} else {
			tsdl_fail(p, line, "unknown integer attribute '%.40s'", key);
		}
		tsdl_expect_punct(p, ';', "';' after an integer attribute");
	}
	tsdl_next(p);
	if (!t->size)
		tsdl_fail(p, line, "integer without a size");
	if (!have_align)
		t->align = t->size % 8 ? 1 : 8;
	t->fixed = true;
	t->bits = t->size;
	return t;
}

/* A floating_point: IEEE 754 binary32 or binary64 only. */
static const struct dump_type *parse_float(struct tsdl *p)
{
	struct dump_type *t = new_type(p, DUMP_FLOAT);
	unsigned int seen = 0, line = p->cur.line, exp = 0, mant = 0;
	bool have_align = false;

	tsdl_next(p);
	tsdl_expect_punct(p, '{', "'{' after floating_point");
	while (!tsdl_is_punct(&p->cur, '}')) {
		const char *key = tsdl_expect_ident(p, "a floating_point attribute");
		struct attr_value v;

		line = p->cur.line;
		tsdl_expect_punct(p, '=', "'=' after an attribute name");
		attr_value(p, &v);
		if (!strcmp(key, "exp_dig")) {
			SEEN(0);
			exp = attr_uint(p, &v, "exp_dig", 64);
		} else if (!strcmp(key, "mant_dig")) {
			SEEN(1);
			mant = attr_uint(p, &v, "mant_dig", 64);
		} else if (!strcmp(key, "align")) {
			SEEN(2);
			t->align = attr_uint(p, &v, "align", 4096);
			if (!t->align || (t->align & (t->align - 1)))
				tsdl_fail(p, line, "align must be a power of two (bits), at most 4096");
			have_align = true;
		} else if (!strcmp(key, "byte_order")) {
			SEEN(3);
			if (v.kind == TOK_IDENT && !strcmp(v.text, "le"))
				t->order = DUMP_ORDER_LE;
			else if (v.kind == TOK_IDENT &&
				 (!strcmp(v.text, "be") || !strcmp(v.text, "network")))
				t->order = DUMP_ORDER_BE;
			else if (v.kind != TOK_IDENT || strcmp(v.text, "native"))
				tsdl_fail(p, line, "byte_order must be le, be, network or native");
		} else {
			tsdl_fail(p, line, "unknown floating_point attribute '%.40s'", key);
		}
		tsdl_expect_punct(p, ';', "';' after a floating_point attribute");
	}
	tsdl_next(p);
	if (exp == 8 && mant == 24)
		t->size = 32;
	else if (exp == 11 && mant == 53)
		t->size = 64;
	else
		tsdl_fail(p, line, "floating_point with exp_dig = %u, mant_dig = %u: only IEEE 754 binary32 (8, 24) and binary64 (11, 53) are supported",
			  exp, mant);
	if (!have_align)
		t->align = 8;
	t->fixed = true;
	t->bits = t->size;
	return t;
}

static const struct dump_type *parse_string(struct tsdl *p)
{
	struct dump_type *t = new_type(p, DUMP_STRING);

	tsdl_next(p);
	t->align = 8;
	t->text = true;
	if (!tsdl_is_punct(&p->cur, '{'))
		return t;
	tsdl_next(p);
	while (!tsdl_is_punct(&p->cur, '}')) {
		const char *key = tsdl_expect_ident(p, "a string attribute");
		unsigned int line = p->cur.line;
		struct attr_value v;

		tsdl_expect_punct(p, '=', "'=' after an attribute name");
		attr_value(p, &v);
		if (strcmp(key, "encoding") || v.kind != TOK_IDENT ||
		    (strcmp(v.text, "UTF8") && strcmp(v.text, "ASCII") &&
		     strcmp(v.text, "none")))
			tsdl_fail(p, line, "a string takes only encoding = UTF8, ASCII or none");
		tsdl_expect_punct(p, ';', "';' after a string attribute");
	}
	tsdl_next(p);
	return t;
}

/* An enum value: a number with an optional sign, in the container's range. */
static long long enum_value(struct tsdl *p, const struct dump_type *c)
{
	unsigned int line = p->cur.line;
	bool neg = false;
	unsigned long long v, max;

	if (tsdl_is_punct(&p->cur, '-')) {
		neg = true;
		tsdl_next(p);
	}
	if (p->cur.kind != TOK_INT)
		tsdl_fail(p, line, "expected an enum value");
	v = p->cur.value;
	tsdl_next(p);
	if (!c->sign) {
		max = c->size == 64 ? ~0ULL : (1ULL << c->size) - 1;
		if (neg && v)
			tsdl_fail(p, line, "negative value in an enum of unsigned integers");
		if (v > max)
			tsdl_fail(p, line, "enum value %llu does not fit in %u bits",
				  v, c->size);
		return (long long)v;
	}
	max = 1ULL << (c->size - 1);	/* magnitude of the most negative */
	if (neg ? v > max : v >= max)
		tsdl_fail(p, line, "enum value %s%llu does not fit in %u signed bits",
			  neg ? "-" : "", v, c->size);
	return neg ? (long long)(0 - v) : (long long)v;
}

static bool enum_le(const struct dump_type *c, long long a, long long b)
{
	return c->sign ? a <= b : (unsigned long long)a <= (unsigned long long)b;
}

static const struct dump_type *parse_enum(struct tsdl *p)
{
	unsigned int line = p->cur.line, cap = 0, n = 0;
	struct dump_enum_entry *e = NULL, *ne;
	const struct dump_type *c;
	struct dump_type *t;
	long long next = 0;
	bool next_ok = true;

	tsdl_next(p);
	if (p->cur.kind == TOK_IDENT)
		tsdl_next(p);		/* the enum's own name: not needed */
	if (!tsdl_is_punct(&p->cur, ':'))
		tsdl_fail(p, p->cur.line, "an enum needs its integer type: enum : <integer type> { ... }");
	tsdl_next(p);
	c = tsdl_type_spec(p);
	if (c->kind != DUMP_INT)
		tsdl_fail(p, line, "the type of an enum must be an integer");
	t = new_type(p, DUMP_ENUM);
	*t = *c;
	t->kind = DUMP_ENUM;
	t->height = 1;
	t->nodes = 1;
	tsdl_expect_punct(p, '{', "'{' before the enum labels");
	while (!tsdl_is_punct(&p->cur, '}')) {
		struct dump_enum_entry *x;

		if (n == cap) {
			if (cap >= 65536)
				tsdl_fail(p, p->cur.line, "more than 65536 enum labels");
			cap = cap ? 2 * cap : 8;
			ne = tsdl_alloc(p, cap * sizeof(*ne));
			if (n)
				memcpy(ne, e, n * sizeof(*ne));
			e = ne;
		}
		x = &e[n];
		if (p->cur.kind != TOK_IDENT && p->cur.kind != TOK_STRING)
			tsdl_fail(p, p->cur.line, "expected an enum label");
		x->label = p->cur.text;
		tsdl_next(p);
		if (tsdl_is_punct(&p->cur, '=')) {
			tsdl_next(p);
			x->lo = enum_value(p, t);
			x->hi = x->lo;
			if (tsdl_is_punct(&p->cur, TOK_ELLIPSIS)) {
				tsdl_next(p);
				x->hi = enum_value(p, t);
				if (!enum_le(t, x->lo, x->hi))
					tsdl_fail(p, p->cur.line, "enum range '%.40s' ends before it starts",
						  x->label);
			}
		} else {
			if (!next_ok)
				tsdl_fail(p, p->cur.line, "enum label '%.40s' has no value left",
					  x->label);
			x->lo = next;
			x->hi = next;
		}
		/* the next implicit value, if there is one in the container */
		next = x->hi + 0ULL + 1;
		next_ok = t->sign ? (unsigned long long)x->hi !=
					(t->size == 64 ? (unsigned long long)LLONG_MAX :
					 (1ULL << (t->size - 1)) - 1) :
				    (unsigned long long)x->hi !=
					(t->size == 64 ? ~0ULL : (1ULL << t->size) - 1);
		n++;
		if (!tsdl_is_punct(&p->cur, ','))
			break;
		tsdl_next(p);
	}
	tsdl_expect_punct(p, '}', "'}' or ',' after an enum label");
	t->entries = e;
	t->nr_entries = n;
	return t;
}

/*
 * Members of a struct or variant, up to the closing brace (consumed):
 * "type name[dims], name2;" ...
 */
static void parse_members(struct tsdl *p, struct dump_type *t)
{
	struct dump_field *f = NULL, *nf;
	unsigned int n = 0, cap = 0, i;

	while (!tsdl_is_punct(&p->cur, '}')) {
		const struct dump_type *base;
		const char *name = NULL;
		unsigned int line = p->cur.line;

		if (tsdl_is_ident(&p->cur, "typealias") ||
		    tsdl_is_ident(&p->cur, "typedef"))
			tsdl_fail(p, line, "type declarations inside a struct are not supported: declare them at the top level");
		if (is_type_keyword(&p->cur)) {
			base = tsdl_type_spec(p);
		} else {
			const char *alias = tsdl_alias_words(p, true, &name);

			base = tsdl_alias_find(p, alias);
			if (!base)
				tsdl_fail(p, line, "unknown type '%.60s' (not a typealias declared before)",
					  alias);
		}
		for (;;) {
			const struct dump_type *ft;

			if (!name)
				name = tsdl_expect_ident(p, "a field name");
			ft = tsdl_declarator(p, base);
			for (i = 0; i < n; i++)
				if (!strcmp(f[i].name, name))
					tsdl_fail(p, line, "field '%.60s' declared twice",
						  name);
			if (n == cap) {
				if (cap >= DUMP_MAX_FIELDS)
					tsdl_fail(p, line, "more than %d fields in a struct",
						  DUMP_MAX_FIELDS);
				cap = cap ? 2 * cap : 8;
				nf = tsdl_alloc(p, cap * sizeof(*nf));
				if (n)
					memcpy(nf, f, n * sizeof(*nf));
				f = nf;
			}
			f[n].name = name;
			f[n++].type = ft;
			adopt(p, t, ft, line);
			name = NULL;
			if (!tsdl_is_punct(&p->cur, ','))
				break;
			tsdl_next(p);
		}
		tsdl_expect_punct(p, ';', "';' after a field");
	}
	tsdl_next(p);
	t->fields = f;
	t->nr_fields = n;
}

static const struct dump_type *parse_struct(struct tsdl *p)
{
	struct dump_type *t = new_type(p, DUMP_STRUCT);
	unsigned long long off = 0;
	unsigned int i, line;

	tsdl_next(p);
	if (p->cur.kind == TOK_IDENT) {
		if (!tsdl_is_punct(tsdl_peek(p), '{'))
			tsdl_fail(p, p->cur.line, "references to named structs are not supported: use a typealias");
		tsdl_next(p);
	}
	tsdl_expect_punct(p, '{', "'{' after struct");
	parse_members(p, t);
	if (tsdl_is_ident(&p->cur, "align") &&
	    tsdl_is_punct(tsdl_peek(p), '(')) {
		tsdl_next(p);
		tsdl_next(p);
		line = p->cur.line;
		if (p->cur.kind != TOK_INT || !p->cur.value ||
		    p->cur.value > 4096 || (p->cur.value & (p->cur.value - 1)))
			tsdl_fail(p, line, "align() must be a power of two (bits), at most 4096");
		t->align = p->cur.value;
		tsdl_next(p);
		tsdl_expect_punct(p, ')', "')' after the alignment");
	}
	t->fixed = true;
	for (i = 0; i < t->nr_fields; i++) {
		const struct dump_type *ft = t->fields[i].type;

		if (ft->align > t->align)
			t->align = ft->align;
		if (!ft->fixed)
			t->fixed = false;
		off = align_up(off, ft->align) + ft->bits;
		if (off > (1ULL << 62))
			t->fixed = false;
	}
	t->bits = t->fixed ? off : 0;
	return t;
}

static const struct dump_type *parse_variant(struct tsdl *p)
{
	struct dump_type *t = new_type(p, DUMP_VARIANT);
	struct attr_value v;

	tsdl_next(p);
	if (p->cur.kind == TOK_IDENT) {
		if (!tsdl_is_punct(tsdl_peek(p), '<'))
			tsdl_fail(p, p->cur.line, "references to named variants are not supported");
		tsdl_next(p);
	}
	tsdl_expect_punct(p, '<', "'<' and the tag of the variant");
	if (p->cur.kind != TOK_IDENT)
		tsdl_fail(p, p->cur.line, "expected the name of the variant's tag");
	attr_value(p, &v);
	t->tag = v.text;
	tsdl_expect_punct(p, '>', "'>' after the variant's tag");
	tsdl_expect_punct(p, '{', "'{' after the variant's tag");
	parse_members(p, t);
	return t;
}

const struct dump_type *tsdl_type_spec(struct tsdl *p)
{
	const struct dump_type *t;
	unsigned int line = p->cur.line;
	const char *name;

	if (++p->depth > DUMP_MAX_DEPTH)
		tsdl_fail(p, line, "types nested more than %d deep", DUMP_MAX_DEPTH);
	if (tsdl_is_ident(&p->cur, "integer")) {
		t = parse_integer(p);
	} else if (tsdl_is_ident(&p->cur, "string")) {
		t = parse_string(p);
	} else if (tsdl_is_ident(&p->cur, "enum")) {
		t = parse_enum(p);
	} else if (tsdl_is_ident(&p->cur, "struct")) {
		t = parse_struct(p);
	} else if (tsdl_is_ident(&p->cur, "variant")) {
		t = parse_variant(p);
	} else if (tsdl_is_ident(&p->cur, "floating_point")) {
		t = parse_float(p);
	} else {
		name = tsdl_alias_words(p, false, NULL);
		t = tsdl_alias_find(p, name);
		if (!t)
			tsdl_fail(p, line, "unknown type '%.60s' (not a typealias declared before)",
				  name);
	}
	p->depth--;
	return t;
}

/* One array dimension "[N]" or sequence "[name]" around @elem. */
static const struct dump_type *dimension(struct tsdl *p,
					 const struct dump_type *elem,
					 const struct tok *dim)
{
	struct dump_type *t;
	unsigned long long stride;

	if (dim->kind == TOK_INT) {
		if (dim->value > DUMP_MAX_ARRAY)
			tsdl_fail(p, dim->line, "array of %llu elements: at most %llu",
				  dim->value, DUMP_MAX_ARRAY);
		t = new_type(p, DUMP_ARRAY);
		t->length = dim->value;
		t->fixed = elem->fixed;
		if (t->fixed && t->length) {
			stride = align_up(elem->bits, elem->align);
			if (stride && (t->length - 1) > ((1ULL << 62) - elem->bits) / stride)
				t->fixed = false;	/* too large to be real */
			else
				t->bits = stride * (t->length - 1) + elem->bits;
		}
	} else {
		t = new_type(p, DUMP_SEQUENCE);
		t->length_name = dim->text;
	}
	t->elem = elem;
	t->align = elem->align;
	adopt(p, t, elem, dim->line);
	return t;
}

const struct dump_type *tsdl_declarator(struct tsdl *p,
					const struct dump_type *type)
{
	struct tok dims[8];
	unsigned int n = 0;

	while (tsdl_is_punct(&p->cur, '[')) {
		tsdl_next(p);
		if (n == ARRAY_SIZE(dims))
			tsdl_fail(p, p->cur.line, "more than 8 array dimensions");
		if (p->cur.kind == TOK_INT) {
			dims[n] = p->cur;
		} else if (p->cur.kind == TOK_IDENT) {
			dims[n] = p->cur;
			if (tsdl_is_punct(tsdl_peek(p), '.'))
				tsdl_fail(p, p->cur.line, "the length of a sequence must be the name of an earlier field of the same or an enclosing struct, without a path");
		} else {
			tsdl_fail(p, p->cur.line, "expected an array length or the name of a length field");
		}
		tsdl_next(p);
		tsdl_expect_punct(p, ']', "']' after an array length");
		n++;
	}
	/* name[a][b]: an array of a arrays of b */
	while (n)
		type = dimension(p, type, &dims[--n]);
	return type;
}
