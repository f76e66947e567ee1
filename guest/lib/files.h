/* SPDX-License-Identifier: GPL-2.0 */
/*
 * files.h - whole-file reads and writes for procfs, sysfs and debugfs: errors are
 * returned as -errno, nothing is buffered between calls.
 */
#ifndef LAB_FILES_H
#define LAB_FILES_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Read a file into @buf (NUL-terminated). Returns bytes read or -errno. */
static inline ssize_t read_file(const char *path, char *buf, size_t len)
{
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (off + 1 < len) {
		ssize_t r = read(fd, buf + off, len - 1 - off);

		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		off += r;
	}
	buf[off] = '\0';
	close(fd);
	return off;
}

/* Read a file holding one integer. Returns 0 or -errno (-EINVAL: not a number). */
static inline int read_ll(const char *path, long long *val)
{
	char buf[128], *end;
	ssize_t r = read_file(path, buf, sizeof(buf));

	*val = 0;
	if (r < 0)
		return (int)r;
	errno = 0;
	*val = strtoll(buf, &end, 10);
	if (end == buf || errno)
		return -EINVAL;
	return 0;
}

/*
 * write(2) @len bytes of @data to @path in one call on a fresh descriptor
 * (sysctl files care about the file position). Returns bytes written or -errno.
 */
static inline ssize_t write_file_n(const char *path, const char *data, size_t len)
{
	ssize_t r;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	r = write(fd, data, len);
	if (r < 0)
		r = -errno;
	close(fd);
	return r;
}

static inline ssize_t write_file(const char *path, const char *s)
{
	return write_file_n(path, s, strlen(s));
}

/* Write @s to @dir/@file (cgroup and tracefs control files): 0 or -errno */
static inline int write_file_at(const char *dir, const char *file, const char *s)
{
	char path[300];
	ssize_t r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	r = write_file(path, s);
	return r < 0 ? (int)r : 0;
}

static inline int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Trim trailing whitespace in place. */
static inline char *rtrim(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

#endif /* LAB_FILES_H */
