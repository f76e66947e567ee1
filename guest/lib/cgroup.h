/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup v2 helpers for the guest tests: find the mount, read and write control files. */
#ifndef LAB_CGROUP_H
#define LAB_CGROUP_H

#include "util.h"

/* Where cgroup2 is mounted (set by cg_find_root()) */
static char cg_root[128];

/* Find the cgroup2 mount in /proc/mounts: 0, or -1 if there is none */
static inline int cg_find_root(void)
{
	char buf[8192], *line;

	if (read_file("/proc/mounts", buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char dev[64], mnt[128], type[32];

		if (sscanf(line, "%63s %127s %31s", dev, mnt, type) == 3 && !strcmp(type, "cgroup2")) {
			snprintf(cg_root, sizeof(cg_root), "%s", mnt);
			return 0;
		}
	}
	return -1;
}

/* Write @val to @dir/@file: 0 or -errno */
static inline int cg_write(const char *dir, const char *file, const char *val)
{
	return write_file_at(dir, file, val);
}

/* Read @dir/@file into @out without the trailing newline: 0 or -errno */
static inline int cg_read(const char *dir, const char *file, char *out, size_t len)
{
	char path[300];
	ssize_t r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	r = read_file(path, out, len);
	if (r < 0)
		return (int)r;
	rtrim(out);
	return 0;
}

#endif /* LAB_CGROUP_H */
