// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-dump: print the events of a trace directory (the metadata and the
 * <chan>_<N> stream files lrb-record writes), merged in time order as
 * babeltrace2 does, as text or JSON, validating every packet and record.
 * A bad file stops that file's stream with its name and the offset of
 * the bad bytes; the others go on, and the exit status is 1. With
 * --recover, it writes the trace a persistent channel's region file holds
 * instead.
 */
#include "dump.h"
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lrb/region.h>

struct input {
	char *name;		/* file name in the directory */
	unsigned long long cpu;	/* the N of <chan>_<N> */
	void *map;
	size_t len;
	struct dump_stream s;
	struct dump_item item;	/* the next item, if !done */
	bool done;
	bool failed;
};

static const char usage[] =
	"Usage: lrb-dump [OPTIONS] DIR\n"
	"Print the events of the lrb trace in DIR (its metadata and <chan>_<N>\n"
	"stream files) in time order, one line each, validating every packet\n"
	"and record. A summary goes to stderr.\n"
	"\n"
	"  -j, --json          one JSON object per line\n"
	"  -c, --cpu LIST      only the stream files of these CPUs (\"0,2-3\")\n"
	"  -n, --limit N       stop after N events\n"
	"  -C, --clock-cycles  timestamps in clock cycles, not seconds\n"
	"  -r, --recover FILE  write the trace the region FILE of a persistent\n"
	"                      channel holds into DIR (recovered_<N> stream\n"
	"                      files), with what was dropped counted, instead\n"
	"  -h, --help          this help\n"
	"\n"
	"Exit status: 0 if every file is valid, 1 on a bad or unreadable file,\n"
	"2 on a usage error. See Documentation/tools/lrb-dump.rst.\n";

/* The N of a stream file name "<chan>_<N>", or -1 if it is not one. */
static long long stream_cpu(const char *name)
{
	const char *u = strrchr(name, '_');
	__u64 v;

	if (name[0] == '.' || !u || u == name || !u[1] || u[1] == '+' ||
	    tool_parse_u64(u + 1, &v) || (u[1] == '0' && u[2]))
		return -1;
	return v > 0x7fffffff ? -1 : (long long)v;
}

static int input_cmp(const void *a, const void *b)
{
	const struct input *x = a, *y = b;
	size_t lx = strrchr(x->name, '_') - x->name;
	size_t ly = strrchr(y->name, '_') - y->name;
	int c = strncmp(x->name, y->name, lx < ly ? lx : ly);

	if (c)
		return c;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return strcmp(x->name, y->name);
}

static char *path_of(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = malloc(len);

	if (!p)
		tool_die("out of memory");
	snprintf(p, len, "%s/%s", dir, name);
	return p;
}

static struct dump_meta *load_metadata(const char *dir)
{
	char *path = path_of(dir, "metadata"), *text, err[300];
	struct dump_meta *meta;
	struct stat st;
	size_t len;

	if (stat(path, &st))
		tool_die("%s: %s: is %s a trace directory (lrb-record's output)?",
			 path, strerror(errno), dir);
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)DUMP_META_MAX_BYTES)
		tool_die("%s: not a metadata file (a regular file of at most %lu bytes)",
			 path, DUMP_META_MAX_BYTES);
	text = tool_read_file(path, &len);
	if (!text)
		tool_die("%s: %s", path, strerror(errno));
	meta = dump_meta_parse(text, len, err, sizeof(err));
	if (!meta)
		tool_die("%s: %s", path, err);
	free(text);
	free(path);
	return meta;
}

static const char *file_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a file";
}

/*
 * The stream files of @dir, sorted, mapped. A stream file name that is
 * not a regular file is refused, not skipped: it would be a CPU missing
 * from the output without a word.
 */
static struct input *open_inputs(const char *dir, const bool *cpus,
				 unsigned int *nr)
{
	struct input *in = NULL;
	unsigned int n = 0, cap = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		tool_die("%s: %s", dir, strerror(errno));
	while ((errno = 0, e = readdir(d))) {
		long long cpu = stream_cpu(e->d_name);
		struct lrb_packet_header h;
		struct input *x;
		struct stat st;
		char *path;
		int fd;

		if (cpu < 0)
			continue;
		path = path_of(dir, e->d_name);
		/* look before opening: open() of a FIFO waits for a writer */
		if (stat(path, &st))
			tool_die("%s: %s", path, strerror(errno));
		if (!S_ISREG(st.st_mode))
			tool_die("%s: %s, not a regular file: stream files are regular files; remove it from the trace directory or rename it",
				 path, file_kind(st.st_mode));
		/* O_NONBLOCK: if it was replaced by a FIFO since, do not wait */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st))
			tool_die("%s: %s", path, strerror(errno));
		if (!S_ISREG(st.st_mode))
			tool_die("%s: %s, not a regular file: stream files are regular files; remove it from the trace directory or rename it",
				 path, file_kind(st.st_mode));
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			in = realloc(in, cap * sizeof(*in));
			if (!in)
				tool_die("out of memory");
		}
		x = &in[n++];
		memset(x, 0, sizeof(*x));
		x->name = strdup(e->d_name);
		x->cpu = cpu;
		x->len = st.st_size;
		if (!x->name)
			tool_die("out of memory");
		if (x->len) {
			x->map = mmap(NULL, x->len, PROT_READ, MAP_PRIVATE, fd, 0);
			if (x->map == MAP_FAILED)
				tool_die("%s: mmap: %s", path, strerror(errno));
		}
		close(fd);
		free(path);
		/*
		 * The CPU is the first packet's: with lrb-record --max-size
		 * the name ends in the file's index (<chan>_<cpu>_<index>).
		 */
		if (x->len >= sizeof(h) && lrb_packet_header_load(&h, x->map) >= 0)
			x->cpu = h.cpu_id;
		if (cpus && (x->cpu >= TOOL_MAX_CPUS || !cpus[x->cpu])) {
			if (x->map)
				munmap(x->map, x->len);
			free(x->name);
			n--;
		}
	}
	if (errno)
		tool_die("%s: %s", dir, strerror(errno));
	closedir(d);
	if (n)
		qsort(in, n, sizeof(*in), input_cmp);
	*nr = n;
	return in;
}

/* Min-heap of inputs by next item time, ties in file order. */
static bool before(const struct input *in, unsigned int a, unsigned int b)
{
	if (in[a].item.ts != in[b].item.ts)
		return in[a].item.ts < in[b].item.ts;
	return a < b;
}

static void sift_down(const struct input *in, unsigned int *heap,
		      unsigned int n, unsigned int i)
{
	for (;;) {
		unsigned int l = 2 * i + 1, m = i, t;

		if (l < n && before(in, heap[l], heap[m]))
			m = l;
		if (l + 1 < n && before(in, heap[l + 1], heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* Fetch the next item of @x; false when it has none (end or error). */
static bool advance(const char *dir, struct input *x)
{
	int ret = dump_stream_next(&x->s, &x->item);

	if (ret > 0)
		return true;
	x->done = true;
	if (ret < 0) {
		x->failed = true;
		tool_err("%s/%s: offset %llu: %s", dir, x->name,
			 x->s.err_offset, x->s.err);
	}
	return false;
}

static void summary(const char *dir, const struct input *in, unsigned int n,
		    bool limited)
{
	unsigned long long ev = 0, disc = 0, lost = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct dump_stream *s = &in[i].s;

		ev += s->events;
		disc += s->discarded;
		lost += s->lost_packets;
		fprintf(stderr,
			"  cpu %llu (%s): %llu events in %llu packets, %llu discarded, %llu packets lost%s\n",
			in[i].cpu, in[i].name, s->events, s->packets,
			s->discarded, s->lost_packets,
			in[i].failed ? " (stopped at an error)" : "");
	}
	fprintf(stderr,
		"%s: %s: %u stream files, %llu events, %llu discarded, %llu packets lost%s\n",
		tool_name, dir, n, ev, disc, lost,
		limited ? " (stopped at --limit)" : "");
}

/* A new file @name in the trace directory @dirfd (@dir); its descriptor. */
static int create_file(int dirfd, const char *dir, const char *name)
{
	int fd = trace_file_create(dirfd, name);

	if (fd < 0)
		tool_die("cannot create %s/%s: %s", dir, name, strerror(errno));
	return fd;
}

static void write_file(int fd, const char *dir, const char *name,
		       const void *data, size_t len)
{
	if (tool_write_full(fd, data, len))
		tool_die("writing %s/%s: %s", dir, name, strerror(errno));
}

static void close_file(int fd, const char *dir, const char *name)
{
	if (close(fd))
		tool_die("writing %s/%s: %s", dir, name, strerror(errno));
}

static void report(const char *file, const struct lrb_recovery *rec)
{
	unsigned int b, c;

	for (b = 0; b < rec->nr_bufs; b++) {
		const struct lrb_recovery_stats *st = &rec->bufs[b].stats;

		fprintf(stderr,
			"  buffer %u: %llu records in %llu packets (%llu bytes) recovered; writers lost %llu full, %llu wrap, %llu big, %llu nest, %llu overwrite\n",
			b, (unsigned long long)st->records,
			(unsigned long long)st->packets,
			(unsigned long long)st->bytes,
			(unsigned long long)st->lost_full,
			(unsigned long long)st->lost_wrap,
			(unsigned long long)st->lost_big,
			(unsigned long long)st->lost_nest,
			(unsigned long long)st->lost_overwrite);
		for (c = 0; c < LRB_REGION_NR_LOST; c++)
			if (st->untrusted & (1U << c))
				fprintf(stderr,
					"  buffer %u: loss counter %s untrusted (corrupt in the region): the trace's discarded counts use what the packets counted\n",
					b, lrb_region_lost_name(c));
		for (c = 0; c < LRB_DROP_NR; c++)
			if (st->drop_packets[c] || st->drop_records[c] ||
			    st->drop_bytes[c])
				fprintf(stderr,
					"  buffer %u: dropped (%s): %llu packets, %llu records, %llu bytes\n",
					b, lrb_drop_cause_name(c),
					(unsigned long long)st->drop_packets[c],
					(unsigned long long)st->drop_records[c],
					(unsigned long long)st->drop_bytes[c]);
	}
	fprintf(stderr, "%s: %s: run %llu, %u buffers\n", tool_name, file,
		(unsigned long long)rec->header.run_id, rec->nr_bufs);
}

/*
 * --recover: write the trace that @file, the region file a persistent
 * channel left behind (a process that died, lib/region_user.c), holds
 * into @dir: the metadata kept in the region and one stream file per
 * buffer of the packets lib/region.c recovered, their headers counting
 * what recovery dropped. The file is only read. Returns 0; every failure
 * exits with a message.
 */
static int dump_recover(const char *file, const char *dir)
{
	struct lrb_region_header h;
	struct dump_recover_ctx rc;
	struct lrb_recovery *rec;
	struct lrb_decoder dec = { .payload_size = dump_recover_payload_size,
				   .priv = &rc };
	const char *why;
	struct dump_meta *meta;
	struct stat st;
	char err[300], name[64];
	unsigned int b, i;
	void *map, *pkt;
	int fd, dirfd, ret;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		tool_die("%s: %s", file, strerror(errno));
	if (!st.st_size)
		tool_die("%s: empty: not a persistent channel's file", file);
	map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		tool_die("%s: mmap: %s", file, strerror(errno));
	close(fd);
	why = lrb_region_check(map, st.st_size, &h);
	if (why)
		tool_die("%s: nothing to recover: %s", file, why);
	meta = dump_meta_parse((const char *)map + h.metadata_offset,
			       h.metadata_size, err, sizeof(err));
	if (!meta)
		tool_die("%s: the metadata it holds: %s", file, err);
	rc.meta = meta;
	rc.sc = dump_meta_stream(meta, h.stream_id);
	if (!rc.sc)
		tool_die("%s: stream id %u is not declared in its metadata",
			 file, h.stream_id);
	ret = lrb_region_recover(map, st.st_size, &dec, &rec, &why);
	if (ret == -ENODATA)
		tool_die("%s: nothing to recover: %s", file, why);
	if (ret)
		tool_die("%s: recovery: %s", file, strerror(-ret));
	dirfd = trace_dir_create(dir);
	if (dirfd < 0)
		exit(TOOL_EXIT_ERROR);
	fd = create_file(dirfd, dir, TRACE_METADATA);
	write_file(fd, dir, TRACE_METADATA, rec->metadata, rec->metadata_size);
	close_file(fd, dir, TRACE_METADATA);
	pkt = malloc(h.subbuf_size);
	if (!pkt)
		tool_die("out of memory");
	for (b = 0; b < rec->nr_bufs; b++) {
		trace_stream_name(name, sizeof(name), "recovered", b);
		fd = create_file(dirfd, dir, name);
		for (i = 0; i < rec->bufs[b].nr_packets; i++) {
			long len = lrb_recovery_copy(rec, b, i, pkt,
						     h.subbuf_size);

			if (len < 0)
				tool_die("%s: packet %u of buffer %u: %s", file,
					 i, b, strerror(-len));
			write_file(fd, dir, name, pkt, len);
		}
		close_file(fd, dir, name);
	}
	close(dirfd);
	report(file, rec);
	free(pkt);
	lrb_recovery_free(rec);
	dump_meta_free(meta);
	munmap(map, st.st_size);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "limit", required_argument, NULL, 'n' },
		{ "clock-cycles", no_argument, NULL, 'C' },
		{ "recover", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static bool cpu_set[TOOL_MAX_CPUS];
	unsigned long long printed = 0;
	__u64 limit = ~0ULL;
	unsigned int flags = 0, n, nheap = 0, i, *heap;
	bool *cpus = NULL, failed = false;
	struct dump_meta *meta;
	struct input *in;
	const char *dir, *recover = NULL;
	int c;

	tool_name = "lrb-dump";
	while ((c = getopt_long(argc, argv, "jc:n:Cr:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			flags |= DUMP_JSON;
			break;
		case 'c':
			if (tool_parse_cpus(optarg, cpu_set, TOOL_MAX_CPUS) < 0)
				tool_usage_error("--cpu %s: expected CPU numbers below %d such as 0,2-3",
						 optarg, TOOL_MAX_CPUS);
			cpus = cpu_set;
			break;
		case 'n':
			if (tool_parse_u64(optarg, &limit))
				tool_usage_error("--limit %s: expected a number of events",
						 optarg);
			break;
		case 'C':
			flags |= DUMP_CYCLES;
			break;
		case 'r':
			recover = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return TOOL_EXIT_OK;
		default:
			tool_usage_error("unknown option");
		}
	}
	if (optind != argc - 1)
		tool_usage_error("expected one trace directory");
	dir = argv[optind];
	if (recover)
		return dump_recover(recover, dir);
	meta = load_metadata(dir);
	in = open_inputs(dir, cpus, &n);
	if (!n)
		tool_err("%s: no stream files (<chan>_<N>)%s: nothing to print",
			 dir, cpus ? " of the CPUs given" : "");
	heap = calloc(n + 1, sizeof(*heap));
	if (!heap)
		tool_die("out of memory");
	for (i = 0; i < n; i++) {
		dump_stream_init(&in[i].s, meta, in[i].map, in[i].len);
		if (advance(dir, &in[i]))
			heap[nheap++] = i;
	}
	for (i = nheap / 2; i-- > 0;)
		sift_down(in, heap, nheap, i);
	while (nheap && printed < limit) {
		struct input *x = &in[heap[0]];

		dump_print(stdout, meta, &x->item, flags);
		if (x->item.kind == DUMP_ITEM_EVENT)
			printed++;
		if (!advance(dir, x))
			heap[0] = heap[--nheap];
		sift_down(in, heap, nheap, 0);
	}
	if (fflush(stdout) || ferror(stdout))
		tool_die("writing the output: %s", strerror(errno));
	summary(dir, in, n, nheap && printed >= limit);
	for (i = 0; i < n; i++) {
		failed |= in[i].failed;
		if (in[i].map)
			munmap(in[i].map, in[i].len);
		free(in[i].name);
	}
	free(heap);
	free(in);
	dump_meta_free(meta);
	return failed ? TOOL_EXIT_ERROR : TOOL_EXIT_OK;
}
