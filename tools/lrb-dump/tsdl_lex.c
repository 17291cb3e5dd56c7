// SPDX-License-Identifier: GPL-2.0
/*
 * TSDL tokenizer and the parser's arena. The text is untrusted: tokens
 * are bounded by the input, numbers are checked for overflow, and the
 * arena never holds more than a fixed multiple of the input size.
 */
#include "tsdl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct tsdl_arena {
	struct tsdl_arena *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

#define ARENA_CHUNK (64UL << 10)

void tsdl_fail(struct tsdl *p, unsigned int line, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "line %u: %s", line, msg);
	longjmp(p->fail, 1);
}

void *tsdl_alloc(struct tsdl *p, size_t size)
{
	struct tsdl_arena *a = p->arena;
	size_t chunk;
	void *m;

	size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	/* every node stands for some bytes of text: 64 times the text is ample */
	p->arena_bytes += size;
	if (p->arena_bytes > 64 * p->len + (1UL << 20))
		tsdl_fail(p, p->cur.line, "metadata too complex for its size");
	if (!a || a->size - a->used < size) {
		chunk = size > ARENA_CHUNK ? size : ARENA_CHUNK;
		a = malloc(sizeof(*a) + chunk);
		if (!a)
			tsdl_fail(p, p->cur.line, "out of memory");
		a->next = p->arena;
		a->used = 0;
		a->size = chunk;
		p->arena = a;
	}
	m = (char *)a->data + a->used;
	a->used += size;
	memset(m, 0, size);
	return m;
}

char *tsdl_strndup(struct tsdl *p, const char *s, size_t len)
{
	char *d = tsdl_alloc(p, len + 1);

	memcpy(d, s, len);
	d[len] = 0;
	return d;
}

void tsdl_arena_free(struct tsdl_arena *a)
{
	while (a) {
		struct tsdl_arena *next = a->next;

		free(a);
		a = next;
	}
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Skip blanks and comments; false at the end of the text. */
static bool skip_space(struct tsdl *p)
{
	while (p->pos < p->len) {
		char c = p->text[p->pos];

		if (c == '\n') {
			p->line++;
			p->pos++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' ||
			   c == '\v') {
			p->pos++;
		} else if (c == '/' && p->pos + 1 < p->len &&
			   p->text[p->pos + 1] == '*') {
			unsigned int start = p->line;

			for (p->pos += 2;; p->pos++) {
				if (p->pos + 1 >= p->len)
					tsdl_fail(p, start, "comment not closed");
				if (p->text[p->pos] == '\n')
					p->line++;
				if (p->text[p->pos] == '*' &&
				    p->text[p->pos + 1] == '/')
					break;
			}
			p->pos += 2;
		} else if (c == '/' && p->pos + 1 < p->len &&
			   p->text[p->pos + 1] == '/') {
			while (p->pos < p->len && p->text[p->pos] != '\n')
				p->pos++;
		} else {
			return true;
		}
	}
	return false;
}

static void lex_number(struct tsdl *p, struct tok *t)
{
	unsigned long long v = 0;
	unsigned int base = 10, d;
	const char *s = p->text;

	if (s[p->pos] == '0' && p->pos + 1 < p->len &&
	    (s[p->pos + 1] == 'x' || s[p->pos + 1] == 'X')) {
		base = 16;
		p->pos += 2;
		if (p->pos >= p->len || !s[p->pos] ||
		    !strchr("0123456789abcdefABCDEF", s[p->pos]))
			tsdl_fail(p, p->line, "hexadecimal number without digits");
	} else if (s[p->pos] == '0') {
		base = 8;
	}
	for (; p->pos < p->len; p->pos++) {
		char c = s[p->pos];

		if (is_digit(c))
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (d >= base)
			tsdl_fail(p, p->line, "bad digit '%c' in a number", c);
		if (v > (~0ULL - d) / base)
			tsdl_fail(p, p->line, "number too large for 64 bits");
		v = v * base + d;
	}
	/* integer suffixes of C (u, l) are allowed by TSDL */
	while (p->pos < p->len && strchr("uUlL", s[p->pos]) && s[p->pos])
		p->pos++;
	if (p->pos < p->len && (is_ident_start(s[p->pos]) || is_digit(s[p->pos])))
		tsdl_fail(p, p->line, "bad character '%c' after a number",
			  s[p->pos]);
	t->kind = TOK_INT;
	t->value = v;
}

static void lex_string(struct tsdl *p, struct tok *t)
{
	unsigned int start = p->line;
	size_t from = ++p->pos, n = 0;
	char *out;

	/* first pass: find the end; second: copy with escapes resolved */
	for (;; p->pos++) {
		if (p->pos >= p->len)
			tsdl_fail(p, start, "string not closed");
		if (p->text[p->pos] == '\n')
			tsdl_fail(p, start, "newline in a string");
		if (p->text[p->pos] == '"')
			break;
		if (p->text[p->pos] == '\\')
			p->pos++;
	}
	out = tsdl_alloc(p, p->pos - from + 1);
	for (size_t i = from; i < p->pos; i++) {
		char c = p->text[i];

		if (c == '\\') {
			c = p->text[++i];
			switch (c) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case '\\':
			case '"':
			case '\'':
				break;
			default:
				tsdl_fail(p, start, "unsupported escape '\\%c' in a string",
					  c);
			}
		}
		if (!c)
			tsdl_fail(p, start, "NUL character in a string");
		out[n++] = c;
	}
	out[n] = 0;
	p->pos++;
	t->kind = TOK_STRING;
	t->text = out;
}

static void lex(struct tsdl *p, struct tok *t)
{
	const char *s = p->text;
	char c;

	memset(t, 0, sizeof(*t));
	if (!skip_space(p)) {
		t->kind = TOK_EOF;
		t->line = p->line;
		return;
	}
	t->line = p->line;
	c = s[p->pos];
	if (is_ident_start(c)) {
		size_t from = p->pos;

		while (p->pos < p->len &&
		       (is_ident_start(s[p->pos]) || is_digit(s[p->pos])))
			p->pos++;
		t->kind = TOK_IDENT;
		t->text = tsdl_strndup(p, s + from, p->pos - from);
		return;
	}
	if (is_digit(c)) {
		lex_number(p, t);
		return;
	}
	if (c == '"') {
		lex_string(p, t);
		return;
	}
	t->kind = TOK_PUNCT;
	if (c == ':' && p->pos + 1 < p->len && s[p->pos + 1] == '=') {
		t->punct = TOK_ASSIGN_TYPE;
		p->pos += 2;
		return;
	}
	if (c == '.' && p->pos + 2 < p->len && s[p->pos + 1] == '.' &&
	    s[p->pos + 2] == '.') {
		t->punct = TOK_ELLIPSIS;
		p->pos += 3;
		return;
	}
	if (!c || !strchr("{}()[]<>;:=,.-+", c)) {
		if (c >= 0x20 && c < 0x7f)
			tsdl_fail(p, p->line, "unexpected character '%c'", c);
		tsdl_fail(p, p->line, "unexpected byte 0x%02x (not TSDL text)",
			  (unsigned char)c);
	}
	t->punct = c;
	p->pos++;
}

void tsdl_next(struct tsdl *p)
{
	if (p->have_peek) {
		p->cur = p->peeked;
		p->have_peek = false;
		return;
	}
	lex(p, &p->cur);
}

const struct tok *tsdl_peek(struct tsdl *p)
{
	if (!p->have_peek) {
		lex(p, &p->peeked);
		p->have_peek = true;
	}
	return &p->peeked;
}

bool tsdl_is_punct(const struct tok *t, int c)
{
	return t->kind == TOK_PUNCT && t->punct == c;
}

bool tsdl_is_ident(const struct tok *t, const char *word)
{
	return t->kind == TOK_IDENT && !strcmp(t->text, word);
}

const char *tsdl_tok_desc(struct tsdl *p, char *buf, size_t len)
{
	const struct tok *t = &p->cur;

	switch (t->kind) {
	case TOK_EOF:
		return "end of file";
	case TOK_IDENT:
		snprintf(buf, len, "'%.40s'", t->text);
		break;
	case TOK_INT:
		snprintf(buf, len, "number %llu", t->value);
		break;
	case TOK_STRING:
		snprintf(buf, len, "string \"%.40s\"", t->text);
		break;
	case TOK_PUNCT:
		if (t->punct == TOK_ASSIGN_TYPE)
			return "':='";
		if (t->punct == TOK_ELLIPSIS)
			return "'...'";
		snprintf(buf, len, "'%c'", t->punct);
		break;
	}
	return buf;
}

void tsdl_expect_punct(struct tsdl *p, int c, const char *what)
{
	char buf[64];

	if (!tsdl_is_punct(&p->cur, c))
		tsdl_fail(p, p->cur.line, "expected %s, found %s", what,
			  tsdl_tok_desc(p, buf, sizeof(buf)));
	tsdl_next(p);
}

const char *tsdl_expect_ident(struct tsdl *p, const char *what)
{
	const char *s = p->cur.text;
	char buf[64];

	if (p->cur.kind != TOK_IDENT)
		tsdl_fail(p, p->cur.line, "expected %s, found %s", what,
			  tsdl_tok_desc(p, buf, sizeof(buf)));
	tsdl_next(p);
	return s;
}
