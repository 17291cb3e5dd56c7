/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of lrb-dump's TSDL parser: the arena every node comes from,
 * the tokenizer and the type parser, shared by tsdl_lex.c, tsdl_type.c
 * and tsdl.c. Errors unwind with longjmp to dump_meta_parse(), which
 * frees the arena: no parser function has a cleanup path of its own.
 */
#ifndef _LRB_DUMP_TSDL_H
#define _LRB_DUMP_TSDL_H

#include <setjmp.h>

#include "dump.h"

enum tok_kind {
	TOK_EOF,
	TOK_IDENT,
	TOK_INT,
	TOK_STRING,
	TOK_PUNCT,
};

/* Multi-character punctuation, as TOK_PUNCT values. */
#define TOK_ASSIGN_TYPE 'A'	/* := */
#define TOK_ELLIPSIS 'E'	/* ... */

/**
 * struct tok - a token
 * @kind: its kind
 * @punct: TOK_PUNCT: the character, or TOK_ASSIGN_TYPE, TOK_ELLIPSIS
 * @value: TOK_INT: the value
 * @text: TOK_IDENT, TOK_STRING: the text, NUL-terminated (in the arena)
 * @line: line where it starts
 */
struct tok {
	enum tok_kind kind;
	int punct;
	unsigned long long value;
	const char *text;
	unsigned int line;
};

/* A typealias name and what it stands for (a hash table, chained). */
struct tsdl_alias {
	const char *name;
	const struct dump_type *type;
	struct tsdl_alias *next;
};

#define TSDL_ALIAS_BUCKETS 256

/**
 * struct tsdl - parser state
 * @text: the metadata
 * @len: its length
 * @pos: next byte to tokenize
 * @line: line of @pos
 * @cur: the current token
 * @peeked: a token read ahead, valid if @have_peek
 * @have_peek: @peeked holds a token
 * @arena: allocations
 * @arena_bytes: bytes allocated so far (bounded by the input size)
 * @aliases: typealias names
 * @clocks: clock blocks
 * @nr_clocks: how many
 * @depth: nesting of the type being parsed
 * @big_endian: the trace block says byte_order = be
 * @err: error message buffer
 * @errlen: its size
 * @fail: where errors return to
 */
struct tsdl {
	const char *text;
	size_t len;
	size_t pos;
	unsigned int line;
	struct tok cur;
	struct tok peeked;
	bool have_peek;
	struct tsdl_arena *arena;
	size_t arena_bytes;
	struct tsdl_alias *aliases[TSDL_ALIAS_BUCKETS];
	struct dump_clock *clocks[DUMP_MAX_CLOCKS];	/* in the arena */
	unsigned int nr_clocks;
	unsigned int depth;
	bool big_endian;
	char *err;
	size_t errlen;
	jmp_buf fail;
};

/* Stream and event blocks as parsed (tsdl.c), before the checks. */
struct tsdl_stream {
	bool have_id;
	unsigned long long id;
	const struct dump_type *event_header;
	const struct dump_type *packet_context;
	unsigned int line;
};

struct tsdl_event {
	const char *name;
	bool have_id;
	unsigned long long id;
	bool have_stream;
	unsigned long long stream_id;
	const struct dump_type *fields;
	unsigned int line;
};

struct tsdl_blocks {
	bool have_trace;
	unsigned int trace_line;
	const struct dump_type *packet_header;
	struct tsdl_stream streams[DUMP_MAX_STREAMS];
	unsigned int nr_streams;
	struct tsdl_event *events;
	unsigned long nr_events;
	unsigned long cap_events;
	unsigned long long budget;	/* steps left for the event checks */
};

/* Check the blocks of @b and fill @m (tsdl_check.c). */
void tsdl_build(struct tsdl *p, struct tsdl_blocks *b, struct dump_meta *m);

/* Report an error at @line and unwind to dump_meta_parse(). */
void tsdl_fail(struct tsdl *p, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

/* Zeroed memory from the arena (never NULL: failure unwinds). */
void *tsdl_alloc(struct tsdl *p, size_t size);
char *tsdl_strndup(struct tsdl *p, const char *s, size_t len);
void tsdl_arena_free(struct tsdl_arena *arena);

/* Tokens: tsdl_next() advances to the next one, into p->cur. */
void tsdl_next(struct tsdl *p);
const struct tok *tsdl_peek(struct tsdl *p);
bool tsdl_is_punct(const struct tok *t, int c);
bool tsdl_is_ident(const struct tok *t, const char *word);
void tsdl_expect_punct(struct tsdl *p, int c, const char *what);
const char *tsdl_expect_ident(struct tsdl *p, const char *what);
/* A description of the current token for messages ("'foo'", "end of file"). */
const char *tsdl_tok_desc(struct tsdl *p, char *buf, size_t len);

/*
 * Types. tsdl_type_spec() parses a type specifier starting at p->cur (a
 * keyword, or the words of a typealias name); on return p->cur is the
 * token after it.
 */
const struct dump_type *tsdl_type_spec(struct tsdl *p);
/* The "[dim]..." after a field name: wraps @type in the arrays. */
const struct dump_type *tsdl_declarator(struct tsdl *p,
					const struct dump_type *type);
void tsdl_alias_add(struct tsdl *p, const char *name,
		    const struct dump_type *type, unsigned int line);
const struct dump_type *tsdl_alias_find(struct tsdl *p, const char *name);
/*
 * The words of a typealias name ("unsigned long"), up to the first token
 * that is not an identifier; with @keep_last, the last word is a field
 * name, returned in *@last.
 */
const char *tsdl_alias_words(struct tsdl *p, bool keep_last, const char **last);

#endif /* _LRB_DUMP_TSDL_H */
