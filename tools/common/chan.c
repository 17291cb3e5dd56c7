// SPDX-License-Identifier: GPL-2.0
/*
 * The files of an lrb channel (/dev/lrb/<channel>/cpuN, metadata, stats;
 * Documentation/abi.rst) and the trace directories the tools write.
 */
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const lrb_counter_names[LRB_NR_COUNTERS] = {
	"records_written", "lost_full", "lost_wrap", "lost_big",
	"lost_nest", "lost_packets", "produced", "consumed",
	"packets_read", "bytes_read", "pages_spliced", "lost_overwrite",
};

const char *lrb_dev_dir(void)
{
	const char *d = getenv("LRB_DEV_DIR");

	return d && *d ? d : "/dev/lrb";
}

char *lrb_chan_path(char *buf, size_t len, const char *chan,
		    const char *file)
{
	int n = snprintf(buf, len, "%s/%s%s%s", lrb_dev_dir(), chan,
			 file ? "/" : "", file ? file : "");

	return n < 0 || (size_t)n >= len ? NULL : buf;
}

/* Print the channels that exist, to help with a wrong name. */
static void lrb_list_channels(void)
{
	char names[512] = "";
	size_t used = 0;
	struct dirent *e;
	DIR *d = opendir(lrb_dev_dir());

	if (!d) {
		tool_err("%s does not exist: no channel exists. Load lrb.ko and a client module that creates a channel (devtmpfs must be mounted on /dev)",
			 lrb_dev_dir());
		return;
	}
	while ((e = readdir(d))) {
		int n;

		if (e->d_name[0] == '.')
			continue;
		n = snprintf(names + used, sizeof(names) - used, "%s%s",
			     used ? ", " : "", e->d_name);
		if (n < 0 || (size_t)n >= sizeof(names) - used)
			break;
		used += n;
	}
	closedir(d);
	if (used)
		tool_err("channels in %s: %s", lrb_dev_dir(), names);
	else
		tool_err("%s is empty: no channel exists; load a client module that creates one",
			 lrb_dev_dir());
}

int lrb_chan_cpus(const char *chan, bool *present, unsigned int max)
{
	unsigned int n = 0, skipped = 0;
	char path[4096];
	struct dirent *e;
	DIR *d;

	if (!*chan || strchr(chan, '/')) {
		tool_err("'%s' is not a channel name (a channel is a directory of %s)",
			 chan, lrb_dev_dir());
		return -1;
	}
	if (!lrb_chan_path(path, sizeof(path), chan, NULL)) {
		tool_err("channel name '%s' is too long", chan);
		return -1;
	}
	d = opendir(path);
	if (!d) {
		tool_err("%s: %s: is the channel created (its client module loaded)? lrb.ko files live under %s/<channel>/",
			 path, strerror(errno), lrb_dev_dir());
		if (errno == ENOENT)
			lrb_list_channels();
		return -1;
	}
	memset(present, 0, max * sizeof(*present));
	while ((e = readdir(d))) {
		unsigned long cpu;
		char *end;

		if (strncmp(e->d_name, "cpu", 3) || e->d_name[3] < '0' ||
		    e->d_name[3] > '9')
			continue;
		cpu = strtoul(e->d_name + 3, &end, 10);
		if (*end)
			continue;
		if (cpu >= max) {
			skipped++;
			continue;
		}
		present[cpu] = true;
		if (cpu + 1 > n)
			n = cpu + 1;
	}
	closedir(d);
	if (skipped)
		tool_err("%s: %u cpu files beyond cpu%u ignored (this tool handles %u CPUs)",
			 path, skipped, max - 1, max);
	if (!n) {
		tool_err("%s has no cpuN file: is it an lrb channel?", path);
		return -1;
	}
	return n;
}

int lrb_cpu_open(const char *chan, unsigned int cpu, int flags,
		 struct lrb_buf_info *info)
{
	char path[4096], name[32];
	int fd, err;

	snprintf(name, sizeof(name), "cpu%u", cpu);
	if (!lrb_chan_path(path, sizeof(path), chan, name)) {
		tool_err("channel name '%s' is too long", chan);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0) {
		err = errno;
		switch (err) {
		case ENOENT:
			tool_err("%s: No such file: is the channel created (module loaded)? lrb.ko files live under %s/<channel>/",
				 path, lrb_dev_dir());
			break;
		case EBUSY:
			tool_err("%s: %s: another reader has it open (one reader per cpu file): stop it first",
				 path, strerror(err));
			break;
		case EACCES:
		case EPERM:
			tool_err("%s: %s: the cpu files are root's (mode 0400): run as root",
				 path, strerror(err));
			break;
		default:
			tool_err("%s: open: %s", path, strerror(err));
		}
		errno = err;
		return -1;
	}
	if (info && ioctl(fd, LRB_IOC_GET_INFO, info)) {
		err = errno;
		tool_err("%s: LRB_IOC_GET_INFO: %s: is it an lrb cpu file, and lrb.ko the version of these tools?",
			 path, strerror(err));
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

int lrb_parse_stats_line(const char *line, int *cpu,
			 struct lrb_buf_counters *c)
{
	__u64 *v = lrb_counters_array(c);
	unsigned int i, found = 0;
	const char *p;
	char *end;

	if (!strncmp(line, "total", 5) && (line[5] == ' ' || !line[5])) {
		*cpu = -1;
	} else if (!strncmp(line, "cpu", 3) && line[3] >= '0' &&
		   line[3] <= '9') {
		*cpu = strtol(line + 3, &end, 10);
		if (*end != ' ')
			return -1;
	} else {
		return -1;
	}
	memset(c, 0, sizeof(*c));
	for (i = 0; i < LRB_NR_COUNTERS; i++) {
		size_t len = strlen(lrb_counter_names[i]);

		for (p = strchr(line, ' '); p; p = strchr(p + 1, ' ')) {
			if (strncmp(p + 1, lrb_counter_names[i], len) ||
			    p[1 + len] != '=')
				continue;
			v[i] = strtoull(p + 2 + len, &end, 10);
			if (end != p + 2 + len)
				found++;
			break;
		}
	}
	return found == LRB_NR_COUNTERS ? 0 : -1;
}

char *trace_stream_name(char *buf, size_t len, const char *chan,
			unsigned int cpu)
{
	int n = snprintf(buf, len, "%s_%u", chan, cpu);

	return n < 0 || (size_t)n >= len ? NULL : buf;
}

/* Create the missing parents of @dir (not @dir itself); 0 or -1. */
static int trace_dir_parents(const char *dir)
{
	char parent[4096];
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	while (len && dir[len - 1] != '/')
		len--;
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!len || (len == 1 && dir[0] == '/'))
		return 0;
	if (len >= sizeof(parent)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(parent, dir, len);
	parent[len] = 0;
	return tool_mkdirs(parent);
}

/* Whether the directory @fd has an entry but . and ..; -1 on an error. */
static int trace_dir_used(int fd)
{
	struct dirent *e;
	int used = 0;
	DIR *d;

	fd = dup(fd);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			used = 1;
			break;
		}
	closedir(d);
	return used;
}

int trace_dir_create(const char *dir)
{
	bool made;
	struct stat st;
	int fd, used;

	if (trace_dir_parents(dir)) {
		tool_err("cannot create the parent directories of %s: %s", dir,
			 strerror(errno));
		return -1;
	}
	made = !mkdir(dir, 0755);
	if (!made && errno != EEXIST) {
		tool_err("cannot create the trace directory %s: %s", dir,
			 strerror(errno));
		return -1;
	}
	/* never through a symbolic link: another user may have planted it */
	if (!lstat(dir, &st) && S_ISLNK(st.st_mode)) {
		tool_err("%s is a symbolic link: a trace directory is never reached through one (another user may have planted it); give the name of a new directory",
			 dir);
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		tool_err("%s: %s: give the name of a new directory, which %s creates",
			 dir, strerror(errno), tool_name);
		return -1;
	}
	if (fstat(fd, &st)) {
		tool_err("%s: %s", dir, strerror(errno));
		goto fail;
	}
	/*
	 * Its files are created in it (exclusively, not through a symbolic
	 * link), so no one else may have been able to put anything there.
	 */
	if (st.st_uid != geteuid()) {
		tool_err("%s %s owned by uid %u, not by this user (uid %u): another user may have planted it; give the name of a new directory",
			 dir, made ? "is" : "exists and is", (unsigned int)st.st_uid,
			 (unsigned int)geteuid());
		goto fail;
	}
	if (st.st_mode & 0022) {	/* group or others may write */
		tool_err("%s exists and others may write in it (mode %04o): give the name of a new directory, or chmod go-w %s",
			 dir, (unsigned int)st.st_mode & 07777, dir);
		goto fail;
	}
	used = trace_dir_used(fd);
	if (used < 0) {
		tool_err("%s: %s", dir, strerror(errno));
		goto fail;
	}
	if (used) {
		if (!faccessat(fd, TRACE_METADATA, F_OK, AT_SYMLINK_NOFOLLOW))
			tool_err("%s holds a trace already (%s/%s exists): give another output directory, or remove it",
				 dir, dir, TRACE_METADATA);
		else
			tool_err("%s exists and is not empty: give the name of a new directory, which %s creates, or empty it",
				 dir, tool_name);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

int trace_file_create(int dirfd, const char *name)
{
	return openat(dirfd, name,
		      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}
