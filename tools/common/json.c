// SPDX-License-Identifier: GPL-2.0
/*
 * A small JSON writer: objects, arrays, numbers, booleans and strings,
 * one member per line, so that the output is both machine readable and
 * easy to grep.
 */
#include "tool.h"

#include <math.h>
#include <string.h>

void json_begin(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

void json_end(struct json *j)
{
	while (j->depth)
		json_close(j);
	fputc('\n', j->f);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Separator, indentation and key of the next value. */
static void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	if (key) {
		json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct json *j, const char *key, char open, char close)
{
	json_key(j, key);
	fputc(open, j->f);
	/* deeper than the writer tracks: still valid, just not indented */
	if (j->depth + 1 < (int)TOOL_ARRAY_SIZE(j->first))
		j->depth++;
	j->first[j->depth] = true;
	j->closer[j->depth] = close;
}

void json_object(struct json *j, const char *key)
{
	json_open(j, key, '{', '}');
}

void json_array(struct json *j, const char *key)
{
	json_open(j, key, '[', ']');
}

void json_close(struct json *j)
{
	bool empty = j->first[j->depth];
	char c = j->closer[j->depth];

	if (!j->depth)
		return;
	j->depth--;
	if (!empty)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(c, j->f);
}

void json_u64(struct json *j, const char *key, __u64 v)
{
	json_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_s64(struct json *j, const char *key, long long v)
{
	json_key(j, key);
	fprintf(j->f, "%lld", v);
}

void json_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	/* JSON has no NaN or infinity; 15 digits: a time to the microsecond */
	fprintf(j->f, "%.15g", isfinite(v) ? v : 0.0);
}

void json_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j->f, s ? s : "");
}

void json_counters(struct json *j, const char *key,
		   const struct lrb_buf_counters *c)
{
	struct lrb_buf_counters copy = *c;
	const __u64 *v = lrb_counters_array(&copy);
	unsigned int i;

	json_object(j, key);
	for (i = 0; i < LRB_NR_COUNTERS; i++)
		json_u64(j, lrb_counter_names[i], v[i]);
	json_close(j);
}
