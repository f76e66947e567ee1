/* SPDX-License-Identifier: GPL-2.0 */
/*
 * procfs.h - what the kernel tells through files: the running scheduler and
 * rr_interval (sysfs, sysctl), /proc/<pid>/sched, schedstat and stat, the RSDL
 * debugfs file /sys/kernel/debug/sched/rsdl, the kernel log, and the lab's
 * clock mode on /proc/cmdline.
 */
#ifndef LAB_PROCFS_H
#define LAB_PROCFS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/types.h>
#include <unistd.h>

#include "files.h"
#include "ktap.h"
#include "rsdl_spec.h"

/* ---- the emulator's clock ---------------------------------------------------- */

/*
 * 1 when the guest's time follows its instruction count (the lab boots it with
 * lab.clock=icount: QEMU -icount, one vCPU thread), 0 when it follows the host's
 * clock (lab.clock=multi, or not booted by the lab). Only on an exact clock does
 * a wall-time tail bound or a work-per-time comparison measure the guest's
 * scheduler: with the host's clock, a vCPU thread the host deschedules shows
 * up in the guest as latency and as runtime that did no work.
 */
static inline int guest_clock_exact(void)
{
	static int exact = -1;
	char buf[4096], *p;

	if (exact >= 0)
		return exact;
	exact = 0;
	if (read_file("/proc/cmdline", buf, sizeof(buf)) < 0)
		return exact;
	for (p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		if (!strcmp(p, "lab.clock=icount"))
			exact = 1;
	return exact;
}

static inline const char *guest_clock_name(void)
{
	return guest_clock_exact() ? "instruction count (icount)" : "host clock (multi-thread TCG)";
}

/* ---- the running scheduler and rr_interval ------------------------------------ */

#define RSDL_STATE_PATH "/sys/kernel/rsdl/state"
#define RR_INTERVAL_PATH "/proc/sys/kernel/rr_interval"
#define RSDL_DEBUGFS_PATH "/sys/kernel/debug/sched/rsdl"

/* 1 if the running kernel says RSDL is enabled, 0 otherwise (EEVDF). */
static inline int sched_is_rsdl(void)
{
	char buf[64];

	if (read_file(RSDL_STATE_PATH, buf, sizeof(buf)) < 0)
		return 0;
	return !strcmp(rtrim(buf), "enabled");
}

static inline const char *sched_name(void)
{
	return sched_is_rsdl() ? "RSDL" : "EEVDF";
}

/* The value of an integer sysctl (>= 0), or -1 where it cannot be read */
static inline int sysctl_int_get(const char *path)
{
	long long v;

	if (read_ll(path, &v) < 0 || v < 0)
		return -1;
	return (int)v;
}

/* Write @saved back to @path if it was saved (>= 0) */
static inline void sysctl_int_restore(const char *path, int saved)
{
	char buf[32];

	if (saved >= 0) {
		snprintf(buf, sizeof(buf), "%d\n", saved);
		write_file(path, buf);
	}
}

/*
 * Set the integer sysctl @path to @val. The first call (*@saved < 0) remembers the
 * old value in *@saved and registers @restore (which writes it back) at exit.
 * Returns 0, -ENOENT (the file is missing), or -errno of the write.
 */
static inline int sysctl_int_set(const char *path, int *saved, void (*restore)(void), int val)
{
	char buf[32];
	ssize_t r;

	if (*saved < 0) {
		*saved = sysctl_int_get(path);
		if (*saved < 0)
			return -ENOENT;
		ktap_on_exit(restore);
	}
	snprintf(buf, sizeof(buf), "%d\n", val);
	r = write_file(path, buf);
	if (r < 0)
		return (int)r;
	return sysctl_int_get(path) == val ? 0 : -EIO;
}

static int rr_saved_ms = -1;

static inline int rr_interval_get(void)
{
	return sysctl_int_get(RR_INTERVAL_PATH);
}

/* rr_interval in ms, or the default (6) where it cannot be read (the bench programs) */
static inline int rr_interval_or_default(void)
{
	int v = rr_interval_get();

	return v < 0 ? RSDL_RR_DEFAULT_MS : v;
}

static inline void rr_interval_restore(void)
{
	if (rr_saved_ms > 0)
		sysctl_int_restore(RR_INTERVAL_PATH, rr_saved_ms);
}

/*
 * Set rr_interval (ms). The first call remembers the old value and registers
 * its restore at exit. Returns 0 or -errno.
 */
static inline int rr_interval_set(int ms)
{
	return sysctl_int_set(RR_INTERVAL_PATH, &rr_saved_ms, rr_interval_restore, ms);
}

/* rr_interval_set() or bail out of the test program */
static inline void rr_interval_set_or_bail(int ms)
{
	int r = rr_interval_set(ms);

	if (r)
		ktap_bail("cannot set rr_interval %d: %s", ms, strerror(-r));
}

/*
 * Lending (sched-rsdl.rst rule 14): /proc/sys/kernel/rsdl_lend, 0 (the default) or 1;
 * only present while RSDL runs.
 */
#define RSDL_LEND_PATH "/proc/sys/kernel/rsdl_lend"

static int rsdl_lend_saved = -1;

static inline int rsdl_lend_get(void)
{
	return sysctl_int_get(RSDL_LEND_PATH);
}

static inline void rsdl_lend_restore(void)
{
	sysctl_int_restore(RSDL_LEND_PATH, rsdl_lend_saved);
}

/* Set rsdl_lend (0 or 1); the old value is written back at exit. 0 or -errno. */
static inline int rsdl_lend_set(int on)
{
	return sysctl_int_set(RSDL_LEND_PATH, &rsdl_lend_saved, rsdl_lend_restore, on);
}

/* ---- /proc/<pid>/sched ------------------------------------------------------- */

/* A snapshot of /proc/<pid>/sched. */
struct sched_snap {
	char buf[16384];
};

static inline int sched_snap_read(pid_t pid, struct sched_snap *s)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/sched", (int)pid);
	r = read_file(path, s->buf, sizeof(s->buf));
	return r < 0 ? (int)r : 0;
}

/*
 * Value of "key : value" in a snapshot. Integers are returned as they are;
 * values printed as "ms.nnnnnn" (the kernel's SPLIT_NS format, e.g.
 * se.sum_exec_runtime) are converted to ns. Returns 0 or -ENOENT.
 */
static inline int sched_snap_get(const struct sched_snap *s, const char *key, long long *val)
{
	size_t klen = strlen(key);
	const char *p = s->buf;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		const char *q = p;

		while (*q == ' ')
			q++;
		if (!strncmp(q, key, klen) && (q[klen] == ' ' || q[klen] == ':')) {
			const char *c = strchr(q, ':');

			if (c && (!eol || c < eol)) {
				char *end;
				long long ip;
				int neg;

				c++;
				while (*c == ' ' || *c == '\t')
					c++;
				neg = (*c == '-');
				ip = strtoll(c, &end, 10);
				if (end == c)
					return -EINVAL;
				if (*end == '.') {
					/* SPLIT_NS: integer ms . 6-digit ns remainder */
					long long frac = strtoll(end + 1, NULL, 10);

					ip = ip * 1000000LL + (neg ? -frac : frac);
				}
				*val = ip;
				return 0;
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

/* Read one field of /proc/<pid>/sched. */
static inline int sched_field(pid_t pid, const char *key, long long *val)
{
	static struct sched_snap s;
	int r = sched_snap_read(pid, &s);

	return r ? r : sched_snap_get(&s, key, val);
}

/* The RSDL fields of /proc/<pid>/sched (interfaces.md). */
struct rsdl_fields {
	long long level, time_slice, quota, rotation, cpu_rotation, array, usable_slots;
	long long sum_exec;	/* se.sum_exec_runtime, ns */
	long long policy, prio;
};

/* Returns 0, or -ENOENT naming the first missing field in @missing. */
static inline int rsdl_fields_read(pid_t pid, struct rsdl_fields *f, const char **missing)
{
	static struct sched_snap s;
	static const char *const keys[] = {
		"rsdl.level", "rsdl.time_slice", "rsdl.quota", "rsdl.rotation",
		"rsdl.cpu_rotation", "rsdl.array", "rsdl.usable_slots",
		"se.sum_exec_runtime", "policy", "prio",
	};
	long long *dst[] = {
		&f->level, &f->time_slice, &f->quota, &f->rotation, &f->cpu_rotation,
		&f->array, &f->usable_slots, &f->sum_exec, &f->policy, &f->prio,
	};
	int r = sched_snap_read(pid, &s);

	if (r)
		return r;
	for (unsigned int i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (sched_snap_get(&s, keys[i], dst[i])) {
			if (missing)
				*missing = keys[i];
			return -ENOENT;
		}
	}
	return 0;
}

/* se.nr_migrations of @pid, or -1. */
static inline long long task_migrations(pid_t pid)
{
	long long v = -1;

	return sched_field(pid, "se.nr_migrations", &v) ? -1 : v;
}

/* ---- /sys/kernel/debug/sched/rsdl (key=value tokens, one record per line) ---- */

/*
 * Value of token "key=value" in @line (up to its end or '\n'). Values that
 * are not integers (array=active) are returned through @str if given.
 * Returns 0 or -ENOENT.
 */
static inline int kv_get(const char *line, const char *key, long long *val, char *str,
			 size_t strlen_)
{
	size_t klen = strlen(key);
	const char *p = line;

	while (*p && *p != '\n') {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			const char *v = p + klen + 1;
			char *end;

			if (str) {
				size_t n = strcspn(v, " \t\n");

				if (n >= strlen_)
					n = strlen_ - 1;
				memcpy(str, v, n);
				str[n] = '\0';
			}
			if (val) {
				*val = strtoll(v, &end, 10);
				if (end == v)
					return -EINVAL;
			}
			return 0;
		}
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
	}
	return -ENOENT;
}

struct rsdl_cpu_stat {
	long long rotation, prio_level, nr_running, minor, major, overrun, charge;
	long long loans, loan_ns;	/* rule 14's counters; -1 on kernels without them */
};

/* Parse one per-CPU record ("cpu=N rotation=R prio_level=L ..."); 0 or -EINVAL. */
static inline int rsdl_debugfs_cpu_line(const char *line, struct rsdl_cpu_stat *st)
{
	if (kv_get(line, "loans", &st->loans, NULL, 0))
		st->loans = -1;
	if (kv_get(line, "loan_ns", &st->loan_ns, NULL, 0))
		st->loan_ns = -1;
	if (kv_get(line, "rotation", &st->rotation, NULL, 0) ||
	    kv_get(line, "prio_level", &st->prio_level, NULL, 0) ||
	    kv_get(line, "nr_running", &st->nr_running, NULL, 0) ||
	    kv_get(line, "minor_rotations", &st->minor, NULL, 0) ||
	    kv_get(line, "major_rotations", &st->major, NULL, 0) ||
	    kv_get(line, "max_level_overrun_ns", &st->overrun, NULL, 0) ||
	    kv_get(line, "max_charge_ns", &st->charge, NULL, 0))
		return -EINVAL;
	return 0;
}

/* The per-CPU record of @cpu in the RSDL debugfs file; 0 or -errno. */
static inline int rsdl_debugfs_cpu(int cpu, struct rsdl_cpu_stat *st)
{
	static char buf[65536];
	char *line, *save;

	if (read_file(RSDL_DEBUGFS_PATH, buf, sizeof(buf)) < 0)
		return -ENOENT;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long c;

		if (kv_get(line, "cpu", &c, NULL, 0) || c != cpu ||
		    !kv_get(line, "level", NULL, NULL, 0))
			continue;
		return rsdl_debugfs_cpu_line(line, st);
	}
	return -ENOENT;
}

/*
 * Print, per CPU record of the RSDL debugfs file, its cpu=, load and migration/balance
 * tokens (the counters of sched-rsdl.rst, SMP), e.g.
 * "cpu=0 load_ns=240000000 migrate_wakeup=885 ...".
 */
static inline void rsdl_print_migration_counters(const char *when)
{
	static char buf[65536];
	char *line, *save;
	int found = 0;

	if (!sched_is_rsdl())
		return;
	if (read_file(RSDL_DEBUGFS_PATH, buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char out[512], *tok, *tsave;
		size_t o = 0;
		int keep = 0;

		if (strncmp(line, "cpu=", 4) || strstr(line, " level="))
			continue;
		for (tok = strtok_r(line, " \t", &tsave); tok; tok = strtok_r(NULL, " \t", &tsave)) {
			int k = !strncmp(tok, "cpu=", 4);

			if (strstr(tok, "migrat") || strstr(tok, "balanc") || strstr(tok, "pull") ||
			    strstr(tok, "load"))
				k = keep = 1;
			if (k && o + strlen(tok) + 2 < sizeof(out))
				o += snprintf(out + o, sizeof(out) - o, "%s%s", o ? " " : "", tok);
		}
		if (keep) {
			ktap_diag("debugfs %s: %s", when, out);
			found = 1;
		}
	}
	if (!found)
		ktap_diag("debugfs %s: no migration counters in %s", when, RSDL_DEBUGFS_PATH);
}

/* ---- /proc/<pid>/schedstat, stat, syscall ------------------------------------ */

/* /proc/<pid>/schedstat: runtime ns, run_delay ns, timeslices. */
static inline int schedstat_read(pid_t pid, long long *run_ns, long long *wait_ns, long long *slices)
{
	char path[64], buf[256];
	long long a = 0, b = 0, c = 0;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -errno;
	if (sscanf(buf, "%lld %lld %lld", &a, &b, &c) != 3)
		return -EINVAL;
	if (run_ns)
		*run_ns = a;
	if (wait_ns)
		*wait_ns = b;
	if (slices)
		*slices = c;
	return 0;
}

/* Process state letter from /proc/<pid>/stat, or 0. */
static inline char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	return (p && p[1] == ' ') ? p[2] : 0;
}

/*
 * 1 when @pid is off its CPU and dequeued, asleep: /proc/<pid>/syscall waits in
 * wait_task_inactive() until the task is neither running nor queued, and prints
 * "running" if it was not asleep. The state letter alone is not enough: a task that set
 * TASK_INTERRUPTIBLE and was preempted before schedule() reads 'S' while still queued,
 * and the rest of its way into sleep is charged after that. -1 if the file is unusable.
 */
static inline int proc_dequeued(pid_t pid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strncmp(buf, "running", 7) != 0;
}

/* Runtime (ns) of @pid from /proc/<pid>/schedstat, or -1. */
static inline long long task_runtime_ns(pid_t pid)
{
	long long run = -1;

	return schedstat_read(pid, &run, NULL, NULL) ? -1 : run;
}

/* State (field 3) and processor (field 39, task_cpu()) from the text of /proc/<pid>/stat. */
static inline int proc_stat_parse(char *buf, char *state, int *processor)
{
	int field = 3;
	char *p = strrchr(buf, ')');

	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	while (*p && field < 39) {
		if (*p++ == ' ')
			field++;
	}
	if (field != 39)
		return -1;
	*processor = atoi(p);
	return 0;
}

/* State and processor of @pid; 0 or -1. */
static inline int proc_stat_fields(pid_t pid, char *state, int *processor)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return proc_stat_parse(buf, state, processor);
}

/* Same from a descriptor kept open on /proc/<pid>/stat (pread at 0: no path walk). */
static inline int proc_stat_fields_fd(int fd, char *state, int *processor)
{
	char buf[1024];
	ssize_t r = pread(fd, buf, sizeof(buf) - 1, 0);

	if (r <= 0)
		return -1;
	buf[r] = '\0';
	return proc_stat_parse(buf, state, processor);
}

/* ---- the kernel log --------------------------------------------------------------- */

/* Read the whole kernel log into @buf (NUL-terminated); its length, or -errno. */
static inline int klog_read(char *buf, int size)
{
	int n = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */

	if (n <= 0 || n > size - 1)
		n = size - 1;
	n = klogctl(3, buf, n);		/* SYSLOG_ACTION_READ_ALL */
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

#endif /* LAB_PROCFS_H */
