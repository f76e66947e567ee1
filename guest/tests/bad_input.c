// SPDX-License-Identifier: GPL-2.0
/*
 * bad_input - every file the RSDL series adds under /proc, /sys and debugfs
 * refuses bad input with the documented errno and changes nothing.
 *
 * Expected: sched-rsdl.rst, Interfaces (rr_interval: 1..1000 ms; other
 * values, text and empty writes fail with EINVAL and leave the old value;
 * the state and debugfs files are read-only), rule 13 and rule 14 (rsdl_lend:
 * 0 or 1, anything else EINVAL and the old value kept); the errnos of
 * read-only files are the VFS's. A failure means a bad write was accepted or
 * changed the value, or a read-only file took a write.
 *
 * Files: /proc/sys/kernel/rr_interval (0644, ms, 1..1000, EINVAL otherwise,
 * the old value kept: docs/interfaces.md, rule 13 of
 * Documentation/scheduler/sched-rsdl.rst), /sys/kernel/rsdl/state (0444 sysfs),
 * /sys/kernel/debug/sched/rsdl (0444 debugfs, RSDL boots only), with
 * CONFIG_SCHED_RSDL_DEBUG /sys/kernel/debug/sched/rsdl_check (0444 debugfs,
 * reading it runs the invariant check; RSDL boots only) and any other
 * /sys/kernel/debug/sched/rsdl* entry (see test_debugfs_others()), and
 * /proc/sys/kernel/rsdl_lend (0644, 0 or 1, rule 14; RSDL boots only).
 *
 * How rr_interval parses a write (rsdl_rr_interval_handler): one write(2)
 * is one whole value. It is refused with EINVAL when the file position is not
 * 0, when it is empty or 16 bytes or longer, when what is left after
 * stripping leading and trailing whitespace (strim) is not a base-10 int for
 * kstrtoint() (which takes one leading '+' or '-'), or when the int is
 * outside 1..1000. So " 7 \n" sets 7, "010" sets 10 (base 10, not octal) and
 * "0x6" is refused: this differs from proc_dointvec, which reads base 0
 * (0x6 = 6, 010 = 8) and ignores writes at a nonzero position. A refused
 * write does not move the file position. rsdl_lend's handler parses a write
 * the same way (kstrtoint after strim, one whole value at position 0) and
 * takes 0 and 1 only: "1\n", " 1 " and "+1" set 1, "01" sets 1, "on", "y" and
 * "true" are refused (no kstrtobool).
 *
 * RSDL boots (rsdl=on); every refused write is followed by a read-back, which
 * must still show the value set before it (11, chosen so that a 32- or 64-bit
 * wrap of 2^32+6 or 2^64+6 to 6 would show):
 *  1. rr_garbage: "abc", "6abc", "0x6", "6.5", "6 7", "6,7", "--6", "+-6",
 *     "- 6", "1e3", "six", "\x01", bytes 0xff 0xfe: EINVAL.
 *  2. rr_range: 0, -0, -1, -6, 1001, 2^31-1, 2^31, -2^31, -2^31-1, 2^32+6,
 *     2^63, 2^64+6, 300 digits: EINVAL.
 *  3. rr_empty_whitespace: a zero-length write, " ", "\n", "\t",
 *     " \t\n \n", 15 spaces: EINVAL.
 *  4. rr_valid_padded: " 7 \n" -> 7, "\t8\t" -> 8, "9\n" -> 9, "+12" -> 12,
 *     "013" -> 13, "1" -> 1, "1000" -> 1000, a 15-byte "      14      \n"
 *     -> 14: accepted (the whole length returned) and read back. A 16-byte
 *     padded " 15 " is past the handler's buffer: either refused with EINVAL
 *     and unchanged or read back as 15, never anything else (printed).
 *  5. rr_offsets: pwrite("7") at offset 1 and 4096, lseek(3) + write, and a
 *     write after read() moved the position of an O_RDWR descriptor: EINVAL.
 *     "10" written as "1" then "0" on one descriptor: the first write sets 1,
 *     the second (position 1) is refused, the value stays 1 (never 10 or 0).
 *     "0" then "7" on one descriptor: "0" is refused and moves nothing, so
 *     "7" (at position 0) sets 7. writev() of "1" and "2" is one write: 12.
 *  6. rr_bad_buffer: write(fd, NULL, 2) and a 2-byte write whose second byte
 *     lies in an unmapped page: EFAULT.
 *  7. rr_concurrent: 4 processes write for 1 s, each alternating its valid
 *     value (3, 5, 9, 12) with an invalid one ("0", "1001", "abc", "-3") on
 *     fresh descriptors, while a 5th reads: every valid write accepted, every
 *     invalid one refused with EINVAL, every read one of 11, 3, 5, 9, 12, and
 *     the value at the end one of 3, 5, 9, 12.
 *  8. rr_unprivileged: uid/gid 65534 (no capabilities): open(O_WRONLY) fails
 *     with EACCES (mode 0644), reading works (same value), and a write of a
 *     valid value through a descriptor root opened fails with EPERM
 *     (proc_sys_call_handler checks the writer again at write time); value
 *     unchanged.
 * 9-16. lend_garbage, lend_range, lend_empty_whitespace, lend_valid_padded,
 *     lend_offsets, lend_bad_buffer, lend_concurrent, lend_unprivileged: the
 *     same eight on /proc/sys/kernel/rsdl_lend, every refused write checked
 *     from 1 and again from 0 (a bad write taken as either value shows):
 *     garbage "abc", "1abc", "1x", "0x1", "1.0", "1 0", "1,0", "--1", "+-1",
 *     "- 1", "1e0", "one", "on", "off", "y", "n", "true", "\x01", 0xff 0xfe;
 *     range 2, 3, 10, -1, -2, 2^31-1, 2^31, -2^31, -2^31-1, 2^32, 2^32+1, 2^63,
 *     2^64, 2^64+1, 300 digits; the same empty and whitespace writes; valid
 *     " 0 \n" -> 0, "\t1\t" -> 1, "0\n", "1\n", "00" -> 0, "+1", "0", "01" -> 1,
 *     a 15-byte padded 0, and a 16-byte padded 1 either refused (value 0) or
 *     read back as 1; offsets as in 5 with "0" (pwrite, lseek, after a read:
 *     EINVAL and 1), "01" split (the first write sets 0, the second refused),
 *     "2" then "0" (0), writev "0" + "1" (1); EFAULT as in 6; 4 writers of 0
 *     or 1 and of "2", "-1", "abc", "1x", every read 0 or 1; uid 65534 as in 8
 *     (EACCES at open, EPERM through root's descriptor, the value 1 kept).
 *     The value of the start is written back afterwards. Not asserted: "-0"
 *     (kstrtoint reads it as 0). When RSDL runs without the file, the eight
 *     fail ("missing").
 * 17. state_readonly: see below, content "enabled".
 * 18. debugfs_readonly: as root, open(O_WRONLY) of the 0444 debugfs file
 *     succeeds (root overrides the mode), write(2) fails with EINVAL (no write
 *     method: vfs_write without FMODE_CAN_WRITE) and pwrite(2) at offset 1
 *     with ESPIPE (seq_open() clears FMODE_PWRITE); as uid 65534 the open
 *     fails with EACCES (debugfs is mounted 0700); the header line
 *     "rr_interval_ms=11 enabled=1 lend=L" (L = rsdl_lend; without the file
 *     no lend=) is unchanged afterwards.
 * 19. rsdl_check_readonly: rsdl_check exists exactly when /proc/config.gz
 *     says CONFIG_SCHED_RSDL_DEBUG=y; if it does, the same as 18, with the
 *     summary line "violations=0 since_boot=0" before and after.
 * 20. debugfs_other_entries: every other /sys/kernel/debug/sched/rsdl* entry
 *     refuses uid 65534 (EACCES) and root's writes to it do not change
 *     rr_interval (see test_debugfs_others()).
 * 21. restored: rr_interval written back to its default 6 and read back, and
 *     rsdl_lend reads its value of the start.
 *
 * EEVDF boots (rsdl=off):
 *  1. state_disabled: /sys/kernel/rsdl/state exists and reads "disabled".
 *  2. state_readonly: as root, open() with O_WRONLY, O_RDWR, O_WRONLY|O_TRUNC
 *     and O_WRONLY|O_APPEND fails with EACCES (kernfs refuses write opens of
 *     a file without S_IWUGO, even for root); as uid 65534 likewise; the
 *     content is unchanged.
 *  3. rr_interval_absent: stat and open(O_WRONLY) fail with ENOENT, an
 *     open(O_WRONLY|O_CREAT) fails, and the file is still absent after it.
 *  4. debugfs_absent: /sys/kernel/debug/sched/rsdl likewise absent and not
 *     creatable.
 *  5. rsdl_check_absent: /sys/kernel/debug/sched/rsdl_check likewise (it is
 *     created only when RSDL is enabled).
 *  6. lend_absent: /proc/sys/kernel/rsdl_lend likewise (registered only when
 *     RSDL is enabled, like rr_interval).
 */
#include <dirent.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "util.h"

#define BASE 11			/* rr_interval's value before every refused-write check */
#define DEFAULT_RR 6
#define NOBODY 65534
#define NWRITERS 4
#define RSDL_CHECK_PATH "/sys/kernel/debug/sched/rsdl_check"

struct valid {
	const char *s;
	int v;
};

/*
 * An integer sysctl of the series and the inputs its subtests write: the helpers
 * below act on the one k points to.
 */
struct knob {
	const char *path;
	const char *name;		/* prefix of its subtests' names */
	int nbases, bases[2];		/* set before the refused writes, each in turn */
	const char *const *garbage;
	int ngarbage;
	const char *const *range;	/* out of range (and 300 digits) */
	int nrange;
	const struct valid *valid;	/* accepted in this order, each read back */
	int nvalid;
	const char *long16;		/* 16 bytes of padding around long16_v */
	int long16_v;
	const char *other;		/* a valid one-character value != bases[0] */
	const char *split[2];		/* one value in two write() calls: split[0] is applied */
	int split_v;
	const char *bad_good[2];	/* a refused write, then a valid one, one descriptor */
	int bad_good_v;
	const char *vec[2];		/* one writev() of two parts, value vec_v */
	int vec_v;
	const char *good[NWRITERS], *bad[NWRITERS];	/* the concurrent writers */
};

static const char *const rr_garbage[] = {
	"abc", "6abc", "0x6", "6.5", "6 7", "6,7", "--6", "+-6", "- 6", "1e3", "six", "\x01",
	"\xff\xfe",
};
static const char *const rr_range[] = {
	"0", "-0", "-1", "-6", "1001", "2147483647", "2147483648", "-2147483648", "-2147483649",
	"4294967302", "9223372036854775808", "18446744073709551622",
};
static const struct valid rr_valid[] = {
	{ " 7 \n", 7 }, { "\t8\t", 8 }, { "9\n", 9 }, { "+12", 12 }, { "013", 13 },
	{ "1", 1 }, { "1000", 1000 }, { "      14      \n", 14 },
};
static const struct knob rr_knob = {
	.path = RR_INTERVAL_PATH, .name = "rr", .nbases = 1, .bases = { BASE },
	.garbage = rr_garbage, .ngarbage = sizeof(rr_garbage) / sizeof(rr_garbage[0]),
	.range = rr_range, .nrange = sizeof(rr_range) / sizeof(rr_range[0]),
	.valid = rr_valid, .nvalid = sizeof(rr_valid) / sizeof(rr_valid[0]),
	.long16 = "       15       ", .long16_v = 15,
	.other = "7", .split = { "1", "0" }, .split_v = 1, .bad_good = { "0", "7" },
	.bad_good_v = 7, .vec = { "1", "2" }, .vec_v = 12,
	.good = { "3", "5", "9", "12" }, .bad = { "0", "1001", "abc", "-3" },
};

/* rsdl_lend: 0 or 1, parsed like rr_interval (kstrtoint after strim): no words, no bools */
static const char *const lend_garbage[] = {
	"abc", "1abc", "1x", "0x1", "1.0", "1 0", "1,0", "--1", "+-1", "- 1", "1e0", "one",
	"on", "off", "y", "n", "true", "\x01", "\xff\xfe",
};
static const char *const lend_range[] = {
	"2", "3", "10", "-1", "-2", "2147483647", "2147483648", "-2147483648", "-2147483649",
	"4294967296", "4294967297", "9223372036854775808", "18446744073709551616",
	"18446744073709551617",
};
static const struct valid lend_valid[] = {
	{ " 0 \n", 0 }, { "\t1\t", 1 }, { "0\n", 0 }, { "1\n", 1 }, { "00", 0 }, { "+1", 1 },
	{ "0", 0 }, { "01", 1 }, { "       0      \n", 0 },
};
static const struct knob lend_knob = {
	.path = RSDL_LEND_PATH, .name = "lend", .nbases = 2, .bases = { 1, 0 },
	.garbage = lend_garbage, .ngarbage = sizeof(lend_garbage) / sizeof(lend_garbage[0]),
	.range = lend_range, .nrange = sizeof(lend_range) / sizeof(lend_range[0]),
	.valid = lend_valid, .nvalid = sizeof(lend_valid) / sizeof(lend_valid[0]),
	.long16 = "       1        ", .long16_v = 1,
	.other = "0", .split = { "0", "1" }, .split_v = 0, .bad_good = { "2", "0" },
	.bad_good_v = 0, .vec = { "0", "1" }, .vec_v = 1,
	.good = { "0", "1", "0", "1" }, .bad = { "2", "-1", "abc", "1x" },
};

static const struct knob *k = &rr_knob;	/* the sysctl under test */
static int base_now = BASE;			/* its value before the refused writes */

static const char *err_name(long r)
{
	static char buf[64];

	if (r >= 0) {
		snprintf(buf, sizeof(buf), "returned %ld", r);
		return buf;
	}
	return strerrorname_np((int)-r) ? strerrorname_np((int)-r) : strerror((int)-r);
}

/* Printable form of @len bytes of @s (at most ~60 characters). */
static const char *show(const char *s, size_t len)
{
	static char buf[96];
	size_t o = 0;

	buf[o++] = '"';
	for (size_t i = 0; i < len && o < 60; i++) {
		unsigned char c = s[i];

		if (c == '\n')
			o += snprintf(buf + o, sizeof(buf) - o, "\\n");
		else if (c == '\t')
			o += snprintf(buf + o, sizeof(buf) - o, "\\t");
		else if (c < 0x20 || c >= 0x7f)
			o += snprintf(buf + o, sizeof(buf) - o, "\\x%02x", c);
		else
			buf[o++] = c;
	}
	if (len > 40)
		o += snprintf(buf + o, sizeof(buf) - o, "...\" (%zu bytes)", len);
	else
		buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* "<knob>_<what>": the name of a subtest of the knob under test */
static const char *sub_name(const char *what)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s_%s", k->name, what);
	return buf;
}

static int knob_get(void)
{
	return sysctl_int_get(k->path);
}

static ssize_t wr(const char *data, size_t len)
{
	return write_file_n(k->path, data, len);
}

/* Set the knob to @v (a plain write that must work) or bail. */
static void set_knob(int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", v);
	if (wr(buf, strlen(buf)) != (ssize_t)strlen(buf) || knob_get() != v)
		ktap_bail("cannot set %s to %d (reads %d)", k->path, v, knob_get());
}

/* Set the knob to @v as the value the refused writes must leave */
static void set_base(int v)
{
	base_now = v;
	set_knob(v);
}

/* A write of @len bytes of @s must fail with @want and leave base_now. */
static void refused(struct ktap_sub *s, const char *data, size_t len, int want)
{
	ssize_t r = wr(data, len);
	int v = knob_get();

	ktap_expect(s, r == -want, "write %s: %s, want %s", show(data, len), err_name(r),
		    strerrorname_np(want));
	ktap_expect(s, v == base_now, "write %s changed the value %d -> %d", show(data, len),
		    base_now, v);
	if (v != base_now)
		set_knob(base_now);
}

static void refused_str(struct ktap_sub *s, const char *str, int want)
{
	refused(s, str, strlen(str), want);
}

/* Every string of @in refused with EINVAL, from each of the knob's bases */
static void refused_list(struct ktap_sub *s, const char *const *in, int n)
{
	for (int b = 0; b < k->nbases; b++) {
		set_base(k->bases[b]);
		for (int i = 0; i < n; i++)
			refused_str(s, in[i], EINVAL);
	}
}

/* A write of @str must be accepted whole and read back as @want. */
static void accepted(struct ktap_sub *s, const char *str, int want)
{
	size_t len = strlen(str);
	ssize_t r = wr(str, len);
	int v = knob_get();

	ktap_expect(s, r == (ssize_t)len, "write %s: %s, want %zu", show(str, len), err_name(r),
		    len);
	ktap_expect(s, v == want, "write %s: reads %d, want %d", show(str, len), v, want);
}

static void test_garbage(void)
{
	struct ktap_sub s = { 0 };

	refused_list(&s, k->garbage, k->ngarbage);
	ktap_sub_end(&s, sub_name("garbage"));
}

static void test_range(void)
{
	struct ktap_sub s = { 0 };
	char digits[301];

	refused_list(&s, k->range, k->nrange);
	memset(digits, '9', 300);
	digits[300] = '\0';
	refused_str(&s, digits, EINVAL);
	ktap_sub_end(&s, sub_name("range"));
}

static void test_empty(void)
{
	static const char *const in[] = { " ", "\n", "\t", " \t\n \n", "               " };
	struct ktap_sub s = { 0 };

	for (int b = 0; b < k->nbases; b++) {
		set_base(k->bases[b]);
		refused(&s, "", 0, EINVAL);
	}
	refused_list(&s, in, sizeof(in) / sizeof(in[0]));
	ktap_sub_end(&s, sub_name("empty_whitespace"));
}

static void test_valid_padded(void)
{
	struct ktap_sub s = { 0 };
	int last = k->valid[k->nvalid - 1].v;
	ssize_t r;
	int v;

	set_base(k->bases[0]);
	for (int i = 0; i < k->nvalid; i++)
		accepted(&s, k->valid[i].s, k->valid[i].v);
	r = wr(k->long16, 16);
	v = knob_get();
	ktap_diag("16-byte write %s: %s, reads %d", show(k->long16, 16), err_name(r), v);
	ktap_expect(&s, (r == -EINVAL && v == last) || (r == 16 && v == k->long16_v),
		    "16-byte write %s: %s, reads %d (want EINVAL and %d, or %d)",
		    show(k->long16, 16), err_name(r), v, last, k->long16_v);
	ktap_sub_end(&s, sub_name("valid_padded"));
}

static int open_knob(int flags)
{
	int fd = open(k->path, flags | O_CLOEXEC);

	if (fd < 0)
		ktap_bail("open %s: %s", k->path, strerror(errno));
	return fd;
}

/* Result of one syscall as bytes or -errno. */
static ssize_t res(ssize_t r)
{
	return r < 0 ? -errno : r;
}

static void test_offsets(void)
{
	struct ktap_sub s = { 0 };
	struct iovec iov[2] = { { (void *)k->vec[0], 1 }, { (void *)k->vec[1], 1 } };
	const char *o = k->other;
	char rbuf[8];
	ssize_t r, r2;
	int fd, v;

	set_base(k->bases[0]);
	fd = open_knob(O_WRONLY);
	r = res(pwrite(fd, o, 1, 1));
	v = knob_get();
	ktap_expect(&s, r == -EINVAL && v == base_now, "pwrite \"%s\" at offset 1: %s, reads %d",
		    o, err_name(r), v);
	r = res(pwrite(fd, o, 1, 4096));
	v = knob_get();
	ktap_expect(&s, r == -EINVAL && v == base_now,
		    "pwrite \"%s\" at offset 4096: %s, reads %d", o, err_name(r), v);
	r = res(lseek(fd, 3, SEEK_SET));
	r2 = r == 3 ? res(write(fd, o, 1)) : r;
	v = knob_get();
	ktap_expect(&s, r2 == -EINVAL && v == base_now, "lseek 3 (%s) + write \"%s\": %s, reads %d",
		    err_name(r), o, err_name(r2), v);
	close(fd);

	fd = open_knob(O_RDWR);
	r = res(read(fd, rbuf, 2));
	r2 = res(write(fd, o, 1));
	v = knob_get();
	ktap_expect(&s, r == 2 && r2 == -EINVAL && v == base_now,
		    "read 2 bytes (%s) then write \"%s\" on one O_RDWR descriptor: %s, reads %d",
		    err_name(r), o, err_name(r2), v);
	close(fd);

	fd = open_knob(O_WRONLY);
	r = res(write(fd, k->split[0], 1));
	v = knob_get();
	ktap_expect(&s, r == 1 && v == k->split_v,
		    "\"%s%s\" split, first write \"%s\": %s, reads %d (want %d)", k->split[0],
		    k->split[1], k->split[0], err_name(r), v, k->split_v);
	r = res(write(fd, k->split[1], 1));
	v = knob_get();
	ktap_diag("\"%s%s\" split in two write() calls: second write \"%s\" %s, reads %d",
		  k->split[0], k->split[1], k->split[1], err_name(r), v);
	ktap_expect(&s, r == -EINVAL && v == k->split_v,
		    "\"%s%s\" split, second write \"%s\": %s, reads %d (want EINVAL, %d)",
		    k->split[0], k->split[1], k->split[1], err_name(r), v, k->split_v);
	close(fd);
	set_base(k->bases[0]);

	fd = open_knob(O_WRONLY);
	r = res(write(fd, k->bad_good[0], 1));
	r2 = res(write(fd, k->bad_good[1], 1));
	v = knob_get();
	ktap_expect(&s, r == -EINVAL && r2 == 1 && v == k->bad_good_v,
		    "\"%s\" then \"%s\" on one descriptor: %s, %s, reads %d (want EINVAL, 1, %d)",
		    k->bad_good[0], k->bad_good[1], err_name(r), err_name(r2), v, k->bad_good_v);
	close(fd);

	fd = open_knob(O_WRONLY);
	r = res(writev(fd, iov, 2));
	v = knob_get();
	ktap_expect(&s, r == 2 && v == k->vec_v,
		    "writev \"%s\" + \"%s\": %s, reads %d (want 2, %d)", k->vec[0], k->vec[1],
		    err_name(r), v, k->vec_v);
	close(fd);
	ktap_sub_end(&s, sub_name("offsets"));
}

static void test_bad_buffer(void)
{
	struct ktap_sub s = { 0 };
	long pg = sysconf(_SC_PAGESIZE);
	char *p;
	ssize_t r;
	int fd, v;

	set_base(k->bases[0]);
	fd = open_knob(O_WRONLY);
	r = res(syscall(SYS_write, fd, NULL, 2));
	v = knob_get();
	ktap_expect(&s, r == -EFAULT && v == base_now, "write(fd, NULL, 2): %s, reads %d",
		    err_name(r), v);
	close(fd);

	p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		ktap_bail("mmap: %s", strerror(errno));
	munmap(p + pg, pg);
	p[pg - 1] = k->other[0];
	fd = open_knob(O_WRONLY);
	r = res(write(fd, p + pg - 1, 2));
	v = knob_get();
	ktap_expect(&s, r == -EFAULT && v == base_now,
		    "2-byte write, \"%s\" then an unmapped page: %s, reads %d", k->other,
		    err_name(r), v);
	close(fd);
	munmap(p, pg);
	ktap_sub_end(&s, sub_name("bad_buffer"));
}

struct conc {
	volatile int stop;
	volatile long valid_ok, valid_bad, invalid_refused, invalid_bad;
	volatile long reads, foreign;
	volatile int last_foreign, last_bad_errno;
};

/* 1 if @v is one of the concurrent writers' valid values */
static int conc_good(int v)
{
	for (int i = 0; i < NWRITERS; i++)
		if (v == atoi(k->good[i]))
			return 1;
	return 0;
}

static void writer(struct conc *c, int i)
{
	long vo = 0, vb = 0, ir = 0, ib = 0;

	for (long n = 0; !c->stop; n++) {
		const char *w = (n & 1) ? k->bad[i] : k->good[i];
		ssize_t r = wr(w, strlen(w));

		if (n & 1) {
			if (r == -EINVAL)
				ir++;
			else
				ib++, c->last_bad_errno = (int)r;
		} else {
			if (r == (ssize_t)strlen(w))
				vo++;
			else
				vb++, c->last_bad_errno = (int)r;
		}
	}
	__atomic_add_fetch(&c->valid_ok, vo, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&c->valid_bad, vb, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&c->invalid_refused, ir, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&c->invalid_bad, ib, __ATOMIC_SEQ_CST);
	_exit(0);
}

static void reader(struct conc *c)
{
	long n = 0, f = 0;

	while (!c->stop) {
		int v = knob_get();

		n++;
		if (v != base_now && !conc_good(v))
			f++, c->last_foreign = v;
	}
	c->reads = n;
	c->foreign = f;
	_exit(0);
}

static void test_concurrent(void)
{
	struct conc *c = shared_alloc(sizeof(*c));
	struct ktap_sub s = { 0 };
	pid_t pid[NWRITERS + 1];
	int v, bad_exit = 0;

	set_base(k->bases[0]);
	for (int i = 0; i <= NWRITERS; i++) {
		pid[i] = fork_child();
		if (pid[i] == 0) {
			if (i < NWRITERS)
				writer(c, i);
			reader(c);
		}
	}
	sleep_ms(1000);
	c->stop = 1;
	for (int i = 0; i <= NWRITERS; i++) {
		int st = reap_child(pid[i]);

		bad_exit += !(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	v = knob_get();
	ktap_diag("%s: %d writers for 1 s: %ld valid writes accepted, %ld refused; %ld invalid "
		  "writes refused with EINVAL, %ld not; %ld reads, %ld of a value never written "
		  "validly; value at the end %d", k->path, NWRITERS, c->valid_ok, c->valid_bad,
		  c->invalid_refused, c->invalid_bad, c->reads, c->foreign, v);
	ktap_expect(&s, !bad_exit, "%d writer/reader processes did not exit 0", bad_exit);
	ktap_expect(&s, c->valid_ok > 0 && c->invalid_refused > 0 && c->reads > 0,
		    "no progress: %ld valid, %ld invalid writes, %ld reads", c->valid_ok,
		    c->invalid_refused, c->reads);
	ktap_expect(&s, c->valid_bad == 0, "%ld valid writes refused (last %s)", c->valid_bad,
		    err_name(c->last_bad_errno));
	ktap_expect(&s, c->invalid_bad == 0, "%ld invalid writes not refused with EINVAL (last %s)",
		    c->invalid_bad, err_name(c->last_bad_errno));
	ktap_expect(&s, c->foreign == 0, "%ld reads saw a value never written validly (last %d)",
		    c->foreign, c->last_foreign);
	ktap_expect(&s, conc_good(v), "value at the end %d, want one of %s, %s, %s, %s", v,
		    k->good[0], k->good[1], k->good[2], k->good[3]);
	munmap(c, sizeof(*c));
	ktap_sub_end(&s, sub_name("concurrent"));
}

/* Results of the unprivileged child's attempts (-errno or >= 0). */
struct unpriv {
	int ok;				/* the child dropped its privileges */
	long knob_open_w, knob_read, knob_inherited_w;	/* the sysctl k points to */
	int knob_value;
	long state_open_w, state_open_rw;
	long extra_open_w;		/* open(extra, O_WRONLY) */
};

/* Drop to uid/gid 65534 with no supplementary groups (and so no capabilities). */
static int drop_privileges(void)
{
	return setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	       setresuid(NOBODY, NOBODY, NOBODY) || geteuid() != NOBODY ? -1 : 0;
}

static long try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* As uid 65534: the sysctl k points to (if @rsdl), the state file, @extra */
static struct unpriv *run_unprivileged(int rsdl, const char *extra)
{
	struct unpriv *u = shared_alloc(sizeof(*u));
	int inherited = rsdl ? open_knob(O_WRONLY) : -1;
	pid_t pid = fork_child();

	if (pid == 0) {
		if (drop_privileges())
			_exit(1);
		u->ok = 1;
		if (rsdl) {
			u->knob_open_w = try_open(k->path, O_WRONLY);
			u->knob_read = try_open(k->path, O_RDONLY);
			u->knob_value = knob_get();
			u->knob_inherited_w = res(write(inherited, k->other, 1));
		}
		u->state_open_w = try_open(RSDL_STATE_PATH, O_WRONLY);
		u->state_open_rw = try_open(RSDL_STATE_PATH, O_RDWR);
		if (extra)
			u->extra_open_w = try_open(extra, O_WRONLY);
		_exit(0);
	}
	reap_child(pid);
	if (inherited >= 0)
		close(inherited);
	return u;
}

static void test_unprivileged(void)
{
	struct ktap_sub s = { 0 };
	struct unpriv *u;
	int v;

	set_base(k->bases[0]);
	u = run_unprivileged(1, NULL);
	v = knob_get();
	ktap_diag("%s as uid %d: open(O_WRONLY) %s; open(O_RDONLY) %s, reads %d; write \"%s\" "
		  "through root's descriptor %s; value afterwards %d", k->path, NOBODY,
		  err_name(u->knob_open_w), err_name(u->knob_read), u->knob_value, k->other,
		  err_name(u->knob_inherited_w), v);
	ktap_expect(&s, u->ok, "could not drop to uid %d", NOBODY);
	ktap_expect(&s, u->knob_open_w == -EACCES, "open(O_WRONLY): %s, want EACCES",
		    err_name(u->knob_open_w));
	ktap_expect(&s, u->knob_read == 0 && u->knob_value == base_now,
		    "read: %s, value %d, want %d", err_name(u->knob_read), u->knob_value, base_now);
	ktap_expect(&s, u->knob_inherited_w == -EPERM,
		    "write through a descriptor root opened: %s, want EPERM",
		    err_name(u->knob_inherited_w));
	ktap_expect(&s, v == base_now, "value changed %d -> %d", base_now, v);
	ktap_sub_end(&s, sub_name("unprivileged"));
	munmap(u, sizeof(*u));
}

/* The subtests of test_knob(), in order, after the knob's name */
static const char *const knob_subtests[] = {
	"garbage", "range", "empty_whitespace", "valid_padded", "offsets", "bad_buffer",
	"concurrent", "unprivileged",
};
#define NKNOB_SUBTESTS ((int)(sizeof(knob_subtests) / sizeof(knob_subtests[0])))

/* Every subtest above, on the sysctl @kn */
static void test_knob(const struct knob *kn)
{
	k = kn;
	test_garbage();
	test_range();
	test_empty();
	test_valid_padded();
	test_offsets();
	test_bad_buffer();
	test_concurrent();
	test_unprivileged();
	k = &rr_knob;
	base_now = BASE;
}

/* /sys/kernel/rsdl/state refuses every write open, for root and for uid 65534. */
static void test_state_readonly(const char *want)
{
	static const struct { int flags; const char *name; } opens[] = {
		{ O_WRONLY, "O_WRONLY" }, { O_RDWR, "O_RDWR" },
		{ O_WRONLY | O_TRUNC, "O_WRONLY|O_TRUNC" }, { O_WRONLY | O_APPEND, "O_WRONLY|O_APPEND" },
	};
	struct ktap_sub s = { 0 };
	struct unpriv *u;
	char before[64], after[64];

	if (read_file(RSDL_STATE_PATH, before, sizeof(before)) < 0)
		before[0] = '\0';
	for (unsigned int i = 0; i < sizeof(opens) / sizeof(opens[0]); i++) {
		long r = try_open(RSDL_STATE_PATH, opens[i].flags);

		ktap_diag("root: open(%s, %s): %s", RSDL_STATE_PATH, opens[i].name, err_name(r));
		ktap_expect(&s, r == -EACCES, "root open(%s): %s, want EACCES", opens[i].name,
			    err_name(r));
	}
	u = run_unprivileged(0, NULL);
	ktap_diag("uid %d: open(O_WRONLY) %s, open(O_RDWR) %s", NOBODY, err_name(u->state_open_w),
		  err_name(u->state_open_rw));
	ktap_expect(&s, u->ok, "could not drop to uid %d", NOBODY);
	ktap_expect(&s, u->state_open_w == -EACCES && u->state_open_rw == -EACCES,
		    "uid %d open: %s / %s, want EACCES", NOBODY, err_name(u->state_open_w),
		    err_name(u->state_open_rw));
	munmap(u, sizeof(*u));
	if (read_file(RSDL_STATE_PATH, after, sizeof(after)) < 0)
		after[0] = '\0';
	ktap_expect(&s, !strcmp(before, after) && !strcmp(rtrim(after), want),
		    "content %s before, %s after, want \"%s\"", show(before, strlen(before)),
		    show(after, strlen(after)), want);
	ktap_sub_end(&s, "state_readonly");
}

/*
 * 1 if the running kernel was built with @opt=y (from /proc/config.gz), 0 if
 * not, -1 if the configuration cannot be read.
 */
static int kconfig_has(const char *opt)
{
	FILE *f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	char line[256], want[128];
	int found = 0, lines = 0;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%s=y\n", opt);
	while (fgets(line, sizeof(line), f)) {
		lines++;
		found |= !strcmp(line, want);
	}
	pclose(f);
	return lines ? found : -1;
}

/* The summary of a debugfs file: its first line, or its line starting with @key. */
static void debugfs_line(const char *path, const char *key, char *out, size_t len)
{
	static char buf[65536];
	char *p = buf;

	out[0] = '\0';
	if (read_file(path, buf, sizeof(buf)) < 0)
		return;
	while (key && strncmp(p, key, strlen(key))) {
		p = strchr(p, '\n');
		if (!p)
			return;
		p++;
	}
	p[strcspn(p, "\n")] = '\0';
	snprintf(out, len, "%.100s", p);
}

/*
 * A 0444 debugfs file of the series: as root, open(O_WRONLY) succeeds (root
 * overrides the mode), write(2) fails with EINVAL (no write method: vfs_write
 * without FMODE_CAN_WRITE) and pwrite(2) with ESPIPE (seq_open() clears
 * FMODE_PWRITE, which pwrite checks first); as uid 65534 the open
 * fails with EACCES (debugfs is mounted 0700); its summary line (@key, or the
 * first line) reads @want before and after, and rr_interval is unchanged.
 */
static void test_debugfs_ro(const char *path, const char *key, const char *want,
			    const char *name)
{
	static const char *const in[] = { "rr_interval_ms=7\n", "1", "abc", "" };
	struct ktap_sub s = { 0 };
	char before[128], after[128];
	struct unpriv *u;

	debugfs_line(path, key, before, sizeof(before));
	for (unsigned int i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		size_t len = strlen(in[i]);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		ssize_t r = fd < 0 ? -errno : res(write(fd, in[i], len));
		ssize_t r2 = fd < 0 ? -errno : res(pwrite(fd, in[i], len, 1));

		if (fd >= 0)
			close(fd);
		if (!i)
			ktap_diag("root: open(%s, O_WRONLY) %s, write %s, pwrite at 1 %s", path,
				  fd < 0 ? strerror(errno) : "succeeded", err_name(r), err_name(r2));
		ktap_expect(&s, fd >= 0 && r == -EINVAL && r2 == -ESPIPE,
			    "root: write %s to %s: open %s, write %s, pwrite %s; want EINVAL, ESPIPE",
			    show(in[i], len), path, fd < 0 ? strerror(errno) : "ok", err_name(r),
			    err_name(r2));
	}
	u = run_unprivileged(1, path);
	ktap_diag("uid %d: open(%s, O_WRONLY) %s", NOBODY, path, err_name(u->extra_open_w));
	ktap_expect(&s, u->ok && u->extra_open_w == -EACCES, "uid %d open: %s, want EACCES", NOBODY,
		    err_name(u->extra_open_w));
	munmap(u, sizeof(*u));
	debugfs_line(path, key, after, sizeof(after));
	ktap_diag("%s: \"%s\" before, \"%s\" after", path, before, after);
	ktap_expect(&s, !strcmp(before, want) && !strcmp(after, want),
		    "\"%s\" before, \"%s\" after, want \"%s\"", before, after, want);
	ktap_expect(&s, rr_interval_get() == BASE, "rr_interval changed to %d", rr_interval_get());
	ktap_sub_end(&s, name);
}

/*
 * The CONFIG_SCHED_RSDL_DEBUG invariant check, /sys/kernel/debug/sched/rsdl_check
 * (0444; reading it checks every online CPU): present exactly when the kernel
 * has the option (/proc/config.gz), then read-only like the other debugfs file,
 * reading "violations=0 since_boot=0" before and after the bad writes.
 */
static void test_rsdl_check(void)
{
	int want = kconfig_has("CONFIG_SCHED_RSDL_DEBUG");
	int have = file_exists(RSDL_CHECK_PATH);

	ktap_diag("CONFIG_SCHED_RSDL_DEBUG: %s; %s %s", want < 0 ? "unknown" : want ? "y" : "not set",
		  RSDL_CHECK_PATH, have ? "present" : "absent");
	if (want < 0 || want != have) {
		ktap_fail("rsdl_check_readonly", "%s %s, CONFIG_SCHED_RSDL_DEBUG %s",
			  RSDL_CHECK_PATH, have ? "present" : "absent",
			  want < 0 ? "unreadable in /proc/config.gz" : want ? "y" : "not set");
		return;
	}
	if (!have) {
		ktap_ok("rsdl_check_readonly");
		return;
	}
	set_knob(BASE);
	test_debugfs_ro(RSDL_CHECK_PATH, "violations=", "violations=0 since_boot=0",
			"rsdl_check_readonly");
}

/*
 * Any other RSDL entry of debugfs (/sys/kernel/debug/sched/rsdl* besides rsdl
 * and rsdl_check, none today): uid 65534 cannot open it for writing (EACCES),
 * and root's writes of garbage, of a number and at offset 1 leave rr_interval
 * alone. Without such an entry the subtest only says so.
 */
static void test_debugfs_others(void)
{
	static const char *const in[] = { "abc", "-1", "99999999999999999999", "7", "" };
	DIR *d = opendir("/sys/kernel/debug/sched");
	struct ktap_sub s = { 0 };
	struct dirent *e;
	int found = 0;

	ktap_expect(&s, d != NULL, "opendir /sys/kernel/debug/sched: %s", strerror(errno));
	while (d && (e = readdir(d))) {
		char path[300];
		struct unpriv *u;
		struct stat st;

		if (strncmp(e->d_name, "rsdl", 4) || !strcmp(e->d_name, "rsdl") ||
		    !strcmp(e->d_name, "rsdl_check"))
			continue;
		found++;
		snprintf(path, sizeof(path), "/sys/kernel/debug/sched/%s", e->d_name);
		set_knob(BASE);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			for (unsigned int i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
				int fd = open(path, O_WRONLY | O_CLOEXEC);
				ssize_t r = fd < 0 ? -errno : res(write(fd, in[i], strlen(in[i])));
				ssize_t r2 = fd < 0 ? -errno : res(pwrite(fd, in[i], strlen(in[i]), 1));

				if (fd >= 0)
					close(fd);
				ktap_diag("root: write %s to %s: %s; at offset 1: %s",
					  show(in[i], strlen(in[i])), path, err_name(r), err_name(r2));
			}
		}
		u = run_unprivileged(1, path);
		ktap_diag("uid %d: open(%s, O_WRONLY) %s", NOBODY, path, err_name(u->extra_open_w));
		ktap_expect(&s, u->ok && u->extra_open_w == -EACCES, "uid %d open %s: %s, want EACCES",
			    NOBODY, path, err_name(u->extra_open_w));
		munmap(u, sizeof(*u));
		ktap_expect(&s, rr_interval_get() == BASE, "writes to %s changed rr_interval to %d",
			    path, rr_interval_get());
	}
	if (d)
		closedir(d);
	if (!found)
		ktap_diag("no other RSDL entry in /sys/kernel/debug/sched");
	ktap_sub_end(&s, "debugfs_other_entries");
}

/* @path is absent, and an O_CREAT open neither works nor creates it. */
static void test_absent(const char *path, const char *name)
{
	struct ktap_sub s = { 0 };
	struct stat st;
	long r1, r2, r3;
	int e;

	e = stat(path, &st) ? errno : 0;
	r1 = try_open(path, O_WRONLY);
	r2 = try_open(path, O_WRONLY | O_CREAT);
	r3 = stat(path, &st) ? -errno : 0;
	ktap_diag("%s: stat %s, open(O_WRONLY) %s, open(O_WRONLY|O_CREAT) %s, stat afterwards %s",
		  path, e ? strerrorname_np(e) : "exists", err_name(r1), err_name(r2), err_name(r3));
	ktap_expect(&s, e == ENOENT, "stat: %s, want ENOENT", e ? strerror(e) : "exists");
	ktap_expect(&s, r1 == -ENOENT, "open(O_WRONLY): %s, want ENOENT", err_name(r1));
	ktap_expect(&s, r2 < 0, "open(O_WRONLY|O_CREAT) succeeded");
	ktap_expect(&s, r3 == -ENOENT, "stat after O_CREAT: %s, want ENOENT", err_name(r3));
	ktap_sub_end(&s, name);
}

int main(void)
{
	int rsdl = sched_is_rsdl(), lend0;
	char buf[64];

	ktap_plan("bad_input", rsdl ? 13 + NKNOB_SUBTESTS : 6);
	ktap_watchdog(60);
	ktap_diag("scheduler: %s", sched_name());
	if (!rsdl) {
		ssize_t r = read_file(RSDL_STATE_PATH, buf, sizeof(buf));

		ktap_check(r >= 0 && !strcmp(rtrim(buf), "disabled"), "state_disabled",
			   "%s: %s", RSDL_STATE_PATH, r < 0 ? strerror((int)-r) : buf);
		test_state_readonly("disabled");
		test_absent(RR_INTERVAL_PATH, "rr_interval_absent");
		test_absent(RSDL_DEBUGFS_PATH, "debugfs_absent");
		test_absent(RSDL_CHECK_PATH, "rsdl_check_absent");
		test_absent(RSDL_LEND_PATH, "lend_absent");
		ktap_finish();
	}

	rr_saved_ms = rr_interval_get();
	if (rr_saved_ms < 0)
		ktap_bail("%s is missing", RR_INTERVAL_PATH);
	if (rr_saved_ms != DEFAULT_RR)
		ktap_diag("rr_interval was %d, not the default %d, at the start", rr_saved_ms,
			  DEFAULT_RR);
	rr_saved_ms = DEFAULT_RR;	/* what the exit cleanup writes back */
	ktap_on_exit(rr_interval_restore);
	lend0 = rsdl_lend_get();
	if (lend0 >= 0) {
		rsdl_lend_saved = lend0;	/* written back after its subtests and at exit */
		ktap_on_exit(rsdl_lend_restore);
		if (lend0 != 0)
			ktap_diag("rsdl_lend was %d, not the default 0, at the start", lend0);
	}

	test_knob(&rr_knob);
	if (lend0 >= 0) {
		test_knob(&lend_knob);
		rsdl_lend_restore();
	} else {
		k = &lend_knob;
		for (int i = 0; i < NKNOB_SUBTESTS; i++)
			ktap_fail(sub_name(knob_subtests[i]), "%s missing (rule 14: present while "
				  "RSDL runs)", RSDL_LEND_PATH);
		k = &rr_knob;
	}
	test_state_readonly("enabled");
	{
		char want[64];
		int n;

		set_knob(BASE);
		n = snprintf(want, sizeof(want), "rr_interval_ms=%d enabled=1", BASE);
		if (lend0 >= 0)
			snprintf(want + n, sizeof(want) - n, " lend=%d", rsdl_lend_get());
		test_debugfs_ro(RSDL_DEBUGFS_PATH, NULL, want, "debugfs_readonly");
	}
	test_rsdl_check();
	test_debugfs_others();
	{
		ssize_t r = wr("6", 1);
		int lend = lend0 >= 0 ? rsdl_lend_get() : -1;

		ktap_check(r == 1 && rr_interval_get() == DEFAULT_RR && lend == lend0, "restored",
			   "rr_interval: writing %d: %s, reads %d; rsdl_lend reads %d, want %d",
			   DEFAULT_RR, err_name(r), rr_interval_get(), lend, lend0);
	}
	ktap_finish();
}
