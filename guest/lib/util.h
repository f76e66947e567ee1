/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.h - helpers shared by the in-guest test programs: time, files,
 * scheduler syscalls, /proc/<pid>/sched parsing, child processes and hogs.
 * Header-only (static inline) so every program stays one static binary.
 */
#ifndef LAB_UTIL_H
#define LAB_UTIL_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktap.h"
#include "rsdl_spec.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL
#define NSEC_PER_USEC 1000LL
#define MS(ns) ((double)(ns) / 1e6)
#define US(ns) ((double)(ns) / 1e3)

/* ---- time ----------------------------------------------------------------- */

static inline int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NSEC_PER_SEC + t->tv_nsec;
}

static inline int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ts_ns(&t);
}

static inline int64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return ts_ns(&t);
}

static inline struct timespec ns_ts(int64_t ns)
{
	struct timespec t = { .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };
	return t;
}

/* Sleep until CLOCK_MONOTONIC reaches @abs_ns (restarts after signals). */
static inline void sleep_until_ns(int64_t abs_ns)
{
	struct timespec t = ns_ts(abs_ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static inline void sleep_ns(int64_t ns)
{
	sleep_until_ns(now_ns() + ns);
}

static inline void sleep_ms(int64_t ms) { sleep_ns(ms * NSEC_PER_MSEC); }

/* Burn CPU until this thread has consumed @ns of CPU time. */
static inline void burn_cpu_ns(int64_t ns)
{
	int64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		;
}

/* Deterministic pseudo-random numbers (fixed seeds: reproducible runs). */
static inline uint32_t lcg_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

static inline int64_t lcg_range(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(((uint64_t)lcg_next(s) << 16 ^ lcg_next(s)) % (uint64_t)(hi - lo + 1));
}

/* ---- files ---------------------------------------------------------------- */

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

/* ---- scheduler detection and tunables --------------------------------------- */

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

static int rr_saved_ms = -1;

static inline int rr_interval_get(void)
{
	long long v;

	if (read_ll(RR_INTERVAL_PATH, &v) < 0)
		return -1;
	return (int)v;
}

static inline void rr_interval_restore(void)
{
	char buf[32];

	if (rr_saved_ms > 0) {
		snprintf(buf, sizeof(buf), "%d\n", rr_saved_ms);
		write_file(RR_INTERVAL_PATH, buf);
	}
}

/*
 * Set rr_interval (ms). The first call remembers the old value and registers
 * its restore at exit. Returns 0 or -errno.
 */
static inline int rr_interval_set(int ms)
{
	char buf[32];
	ssize_t r;

	if (rr_saved_ms < 0) {
		rr_saved_ms = rr_interval_get();
		if (rr_saved_ms < 0)
			return -ENOENT;
		ktap_on_exit(rr_interval_restore);
	}
	snprintf(buf, sizeof(buf), "%d\n", ms);
	r = write_file(RR_INTERVAL_PATH, buf);
	if (r < 0)
		return r;
	return rr_interval_get() == ms ? 0 : -EIO;
}

/* ---- CPUs and affinity ------------------------------------------------------ */

static inline int ncpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (int)n;
}

static inline int cpu_is_online(int cpu)
{
	char path[96];
	long long v;

	if (cpu == 0)
		return 1;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (read_ll(path, &v) < 0)
		return file_exists("/sys/devices/system/cpu") && cpu < ncpus_online();
	return v == 1;
}

/* The CPU the hogs of a test go to: the last online one (CPU 0 keeps the rest). */
static inline int test_cpu(void)
{
	int n = ncpus_online();

	for (int c = n - 1; c > 0; c--)
		if (cpu_is_online(c))
			return c;
	return 0;
}

/* The CPU for the controlling process: 0 (== test_cpu() on one CPU). */
static inline int ctl_cpu(void) { return 0; }

static inline int pin_pid(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set) ? -errno : 0;
}

static inline int pin_self(int cpu) { return pin_pid(0, cpu); }

static inline int unpin_self(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int c = 0; c < ncpus_online() + 8 && c < CPU_SETSIZE; c++)
		CPU_SET(c, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* ---- scheduling syscalls ------------------------------------------------------ */

struct lab_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
	uint32_t sched_util_min;
	uint32_t sched_util_max;
};
#define LAB_SCHED_ATTR_SIZE_VER0 48
#define LAB_SCHED_ATTR_SIZE_VER1 56

static inline int lab_sched_setattr(pid_t pid, struct lab_sched_attr *a, unsigned int flags)
{
	return syscall(SYS_sched_setattr, pid, a, flags) ? -errno : 0;
}

static inline int lab_sched_getattr(pid_t pid, struct lab_sched_attr *a, unsigned int size,
				    unsigned int flags)
{
	return syscall(SYS_sched_getattr, pid, a, size, flags) ? -errno : 0;
}

/* Set policy (+ nice for normal policies, priority for RT). Returns 0 or -errno. */
static inline int set_policy(pid_t pid, int policy, int nice_or_prio, int reset_on_fork)
{
	struct lab_sched_attr a = { .size = sizeof(a) };

	a.sched_policy = policy;
	if (policy == SCHED_FIFO || policy == SCHED_RR)
		a.sched_priority = nice_or_prio;
	else
		a.sched_nice = nice_or_prio;
	if (reset_on_fork)
		a.sched_flags = SCHED_FLAG_RESET_ON_FORK;
	return lab_sched_setattr(pid, &a, 0);
}

/*
 * Make the calling (controlling) process SCHED_FIFO @prio with reset-on-fork,
 * so it wakes on time even on a CPU full of hogs, while children it forks
 * start as plain SCHED_NORMAL nice 0.
 */
static inline int become_controller(int prio)
{
	return set_policy(0, SCHED_FIFO, prio, 1);
}

/*
 * The setup every timing test starts with: become the SCHED_FIFO controller
 * pinned to the control CPU, or bail out of the test program.
 */
static inline void become_controller_or_bail(void)
{
	if (become_controller(50) || pin_self(ctl_cpu()))
		ktap_bail("cannot become SCHED_FIFO controller: %s", strerror(errno));
}

/* rr_interval_set() or bail out of the test program */
static inline void rr_interval_set_or_bail(int ms)
{
	int r = rr_interval_set(ms);

	if (r)
		ktap_bail("cannot set rr_interval %d: %s", ms, strerror(-r));
}

static inline const char *policy_name(int policy)
{
	switch (policy) {
	case SCHED_OTHER: return "NORMAL";
	case SCHED_FIFO: return "FIFO";
	case SCHED_RR: return "RR";
	case SCHED_BATCH: return "BATCH";
	case SCHED_IDLE: return "IDLE";
	default: return "?";
	}
}

/* ---- /proc/<pid>/sched and schedstat ------------------------------------------ */

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
};

/* Parse one per-CPU record ("cpu=N rotation=R prio_level=L ..."); 0 or -EINVAL. */
static inline int rsdl_debugfs_cpu_line(const char *line, struct rsdl_cpu_stat *st)
{
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

/*
 * Wait (polling) until @pid is blocked: state S or D and, where /proc/<pid>/syscall
 * works, dequeued (so its runtime up to the sleep is charged); 0 on success, -1 on timeout.
 * The poll interval doubles from 100 us to 2 ms: a SCHED_FIFO caller on @pid's own CPU
 * (1-CPU boots) preempts @pid at every poll, and under emulation each poll (timer
 * interrupt, wakeup, /proc read) costs several 100 us, charged largely to @pid: polling
 * every 100 us there left a freshly forked task still runnable after a second.
 */
static inline int wait_blocked(pid_t pid, int64_t timeout_ns)
{
	int64_t end = now_ns() + timeout_ns, poll = 100 * NSEC_PER_USEC;

	do {
		char st = proc_state(pid);

		if ((st == 'S' || st == 'D') && proc_dequeued(pid) != 0)
			return 0;
		sleep_ns(poll);
		if (poll < 2 * NSEC_PER_MSEC)
			poll *= 2;
	} while (now_ns() < end);
	return -1;
}

/* ---- shared memory, children ------------------------------------------------------ */

static inline void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ktap_bail("mmap(%zu): %s", size, strerror(errno));
	memset(p, 0, size);
	return p;
}

/*
 * fork() a tracked child that dies with the parent. Returns the pid in the
 * parent, 0 in the child (which must end with _exit()).
 */
static inline pid_t fork_child(void)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ktap_bail("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		ktap_nchildren = 0;
		ktap_ncleanups = 0;
		return 0;
	}
	ktap_track_child(pid);
	return pid;
}

/* Wait for a tracked child; returns its wait status or -1. */
static inline int reap_child(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	ktap_untrack_child(pid);
	return st;
}

static inline void kill_child(pid_t pid)
{
	kill(pid, SIGKILL);
	reap_child(pid);
}

/* ---- hogs ------------------------------------------------------------------------------ */

/*
 * A hog's shared slot, one cache line each. The hog runs a fixed loop and
 * publishes its progress; iterations are a scheduler-independent measure of
 * CPU time received (every hog runs the same loop at the same speed).
 */
struct hog_slot {
	volatile uint64_t iters;	/* loop passes */
	volatile int64_t last_ns;	/* CLOCK_MONOTONIC of the last pass */
	volatile int64_t cpu_ns;	/* CLOCK_THREAD_CPUTIME_ID, refreshed every 64 passes */
	volatile int cpu;		/* sched_getcpu() of the last sample (HOG_GETCPU) */
	volatile int ready;
	volatile uint64_t wrong_cpu;	/* samples on a CPU other than slot->want_cpu */
	volatile int want_cpu;
	volatile int stop;
	volatile int64_t cpu_change_ns;	/* HOG_GETCPU: when the sampled CPU last changed */
	/* HOG_GAP: gaps (> gap_ns between consecutive clock reads) inside [win_start, win_end] */
	volatile int64_t win_start, win_end;
	volatile int64_t max_gap, first_in_win, last_in_win, ngaps;
	char pad[24];
};

enum hog_kind {
	HOG_COUNT,	/* count loop passes */
	HOG_GETCPU,	/* also sample sched_getcpu() every pass */
	HOG_GAP,	/* also record the longest gap between two clock reads */
};

#define HOG_GAP_NS (50 * NSEC_PER_USEC)
#define HOG_INNER 256	/* inner spins per pass: a pass is a few microseconds */

struct task_cfg {
	int cpu;	/* -1: not pinned */
	int policy;	/* SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR */
	int nice;	/* normal policies */
	int prio;	/* RT policies */
};

static inline int task_cfg_policy(const struct task_cfg *c)
{
	if (c->policy == SCHED_FIFO || c->policy == SCHED_RR)
		return set_policy(0, c->policy, c->prio, 0);
	return set_policy(0, c->policy, c->nice, 0);
}

/*
 * Apply policy, then pinning, to the calling process; 0 or -errno. Policy
 * first: a nice 19 task that moved onto a CPU owned by a nice -20 hog before
 * renicing itself could wait seconds (EEVDF) for the CPU time to do so.
 */
static inline int task_cfg_apply(const struct task_cfg *c)
{
	int r = task_cfg_policy(c);

	if (r)
		return r;
	return c->cpu >= 0 ? pin_self(c->cpu) : 0;
}

static inline void hog_loop(struct hog_slot *s, enum hog_kind kind, int64_t max_ns)
{
	int64_t start = now_ns(), last = start;
	uint64_t n = 0;

	s->last_ns = start;
	for (;;) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		n++;
		if (kind == HOG_GETCPU) {
			int c = sched_getcpu();

			if (c != s->cpu)
				s->cpu_change_ns = now_ns();
			s->cpu = c;
			if (s->want_cpu >= 0 && c != s->want_cpu)
				s->wrong_cpu++;
		}
		if (kind == HOG_GAP || (n & 63) == 0) {
			int64_t t = now_ns();

			if (kind == HOG_GAP) {
				int64_t ws = s->win_start, we = s->win_end;

				if (ws && t >= ws && (!we || t <= we)) {
					if (!s->first_in_win)
						s->first_in_win = t;
					if (last >= ws && t - last > HOG_GAP_NS) {
						s->ngaps++;
						if (t - last > s->max_gap)
							s->max_gap = t - last;
					}
					s->last_in_win = t;
				}
			}
			last = t;
			s->last_ns = t;
			if ((n & 63) == 0) {
				s->cpu_ns = thread_cpu_ns();
				if (s->stop || (max_ns && t - start > max_ns))
					break;
			}
		}
		s->iters = n;
	}
	s->iters = n;
	_exit(0);
}

/*
 * Fork a hog: pinned/policy per @c, looping with @kind, stopping by itself
 * after @max_ns (0 = only when killed) so nothing outlives a broken test.
 *
 * The child blocks on a pipe until the parent has set its policy and its
 * affinity (sched_setattr/sched_setaffinity on the sleeping child), so it
 * first runs on its own CPU with its own policy: hogs never compete for the
 * parent's CPU while setting themselves up (a nice -20 sibling there would
 * delay the others' setup by up to seconds), and a nice 19 hog does not have
 * to win CPU time beside a nice -20 hog to renice itself. "ready" means
 * configured, not "has run": a low-weight hog may legitimately wait long for
 * its first slice, and its share is what the tests measure.
 * The parent waits (up to 300 ms) until the child does block on the pipe:
 * otherwise (1-CPU boots, where the SCHED_FIFO parent keeps the CPU) the child
 * has not run yet when it is reconfigured and pays its whole way back from
 * fork() (several ms of page faults under emulation) with the new policy: a
 * nice 19 hog beside nice -20 hogs at rr_interval 1 then needed seconds to
 * reach its loop. The limit keeps spawning quick where earlier hogs share the
 * parent's CPU (the child then finishes its way with its new policy).
 */
static inline pid_t spawn_hog(const struct task_cfg *c, struct hog_slot *s, enum hog_kind kind,
			      int64_t max_ns)
{
	int gate[2], r;
	pid_t pid;
	char go = 0;

	if (pipe(gate))
		ktap_bail("pipe: %s", strerror(errno));
	pid = fork_child();
	if (pid == 0) {
		close(gate[1]);
		if (read(gate[0], &go, 1) != 1 || go != 'g')
			_exit(1);
		close(gate[0]);
		hog_loop(s, kind, max_ns);
	}
	close(gate[0]);
	wait_blocked(pid, 300 * NSEC_PER_MSEC);
	if (c->policy == SCHED_FIFO || c->policy == SCHED_RR)
		r = set_policy(pid, c->policy, c->prio, 0);
	else
		r = set_policy(pid, c->policy, c->nice, 0);
	if (!r && c->cpu >= 0)
		r = pin_pid(pid, c->cpu);
	if (r) {
		ktap_diag("hog setup (%s, nice %d / prio %d, CPU %d) failed: %s",
			  policy_name(c->policy), c->nice, c->prio, c->cpu, strerror(-r));
		s->ready = -1;
		close(gate[1]);
		return pid;
	}
	go = 'g';
	if (write(gate[1], &go, 1) != 1)
		s->ready = -1;
	else
		s->ready = 1;
	close(gate[1]);
	return pid;
}

/* Wait until every slot is ready (1); returns 0, or -1 (setup failure/timeout). */
static inline int hogs_wait_ready(struct hog_slot *s, int n, int64_t timeout_ns)
{
	int64_t t0 = now_ns(), end = t0 + timeout_ns;

	for (;;) {
		int ok = 0;

		for (int i = 0; i < n; i++) {
			if (s[i].ready < 0)
				return -1;
			ok += s[i].ready == 1;
		}
		if (ok == n)
			return 0;
		if (now_ns() > end) {
			ktap_diag("hogs not ready after %.0f ms:", MS(now_ns() - t0));
			for (int i = 0; i < n; i++)
				ktap_diag("  slot %d: ready %d, %llu passes, last seen %.1f ms ago", i,
					  s[i].ready, (unsigned long long)s[i].iters,
					  s[i].last_ns ? MS(now_ns() - s[i].last_ns) : -1.0);
			for (int i = 0; i < ktap_nchildren; i++) {
				char path[64], buf[1024], *p;
				long long run = -1, wait = -1;

				snprintf(path, sizeof(path), "/proc/%d/stat", (int)ktap_children[i]);
				if (read_file(path, buf, sizeof(buf)) < 0)
					continue;
				p = strrchr(buf, ')');
				schedstat_read(ktap_children[i], &run, &wait, NULL);
				ktap_diag("  child %d: state %c, runtime %.1f ms, run delay %.1f ms",
					  (int)ktap_children[i], p ? p[2] : '?', MS(run), MS(wait));
			}
			return -1;
		}
		sleep_ms(1);
	}
}

/* ---- statistics ---------------------------------------------------------------------------- */

static inline int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Percentile (0..100) of @n values; sorts @v in place. */
static inline int64_t percentile(int64_t *v, int n, double pct)
{
	int idx;

	if (n <= 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_i64);
	idx = (int)(pct / 100.0 * (n - 1) + 0.5);
	if (idx >= n)
		idx = n - 1;
	return v[idx];
}

/*
 * Wake-latency sampler (runs in its own child): sleeps @n times until an
 * absolute CLOCK_MONOTONIC target a random @period_lo..@period_hi ahead,
 * records (wake time - target) into @lat, and burns @work_ns of CPU after
 * each wake. Timer slack is 1 ns so slack does not count as latency.
 */
static inline void wake_sampler(const struct task_cfg *c, int64_t *lat, int n,
				int64_t period_lo, int64_t period_hi, int64_t work_ns,
				uint64_t seed, volatile int *ready)
{
	uint64_t s = seed;

	if (task_cfg_apply(c)) {
		*ready = -1;
		_exit(1);
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	*ready = 1;
	for (int i = 0; i < n; i++) {
		int64_t target = now_ns() + lcg_range(&s, period_lo, period_hi);
		struct timespec t = ns_ts(target);

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
		lat[i] = now_ns() - target;
		if (work_ns)
			burn_cpu_ns(work_ns);
	}
	_exit(0);
}

struct lat_stats {
	int64_t p50, p90, p99, max;
};

static inline struct lat_stats lat_summary(int64_t *lat, int n)
{
	struct lat_stats st;

	st.p50 = percentile(lat, n, 50);
	st.p90 = percentile(lat, n, 90);
	st.p99 = percentile(lat, n, 99);
	st.max = percentile(lat, n, 100);
	return st;
}

/* CPU time (user + system, ns) the last run_wake_sampler() child used */
static int64_t wake_sampler_cpu_ns;

/*
 * Run wake_sampler in a child with @c and wait for it. @lat must be shared
 * memory. Returns 0 or -1 (child failed / did not finish in @timeout_ns).
 * The child's CPU time is left in wake_sampler_cpu_ns.
 */
static inline int run_wake_sampler(const struct task_cfg *c, int64_t *lat, int n,
				   int64_t period_lo, int64_t period_hi, int64_t work_ns,
				   uint64_t seed, int64_t timeout_ns)
{
	volatile int *ready = shared_alloc(sizeof(int));
	int64_t end;
	pid_t pid = fork_child();
	int st;

	if (pid == 0)
		wake_sampler(c, lat, n, period_lo, period_hi, work_ns, seed, ready);
	end = now_ns() + timeout_ns;
	wake_sampler_cpu_ns = 0;
	for (;;) {
		struct rusage ru;
		pid_t r = wait4(pid, &st, WNOHANG, &ru);

		if (r == pid) {
			ktap_untrack_child(pid);
			wake_sampler_cpu_ns = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
						      NSEC_PER_SEC +
					      ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) *
						      NSEC_PER_USEC;
			break;
		}
		if (now_ns() > end) {
			kill_child(pid);
			munmap((void *)ready, sizeof(int));
			return -1;
		}
		sleep_ms(5);
	}
	munmap((void *)ready, sizeof(int));
	return (WIFEXITED(st) && WEXITSTATUS(st) == 0) ? 0 : -1;
}


#endif /* LAB_UTIL_H */
