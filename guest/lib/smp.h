/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smp.h - helpers of the SMP placement and balancing tests (smp_share,
 * nplus1_share, pinned_mask, wake_placement, hotplug_churn): gated children
 * with a chosen affinity, spinning hogs that publish their CPU, per-task shares from
 * /proc/<pid>/schedstat, /proc/<pid>/stat fields, Jain's fairness index.
 */
#ifndef LAB_SMP_H
#define LAB_SMP_H

#include "stats.h"
#include "util.h"

/* The online CPUs 0..ncpus_online()-1 (the lab never has holes at start). */
static inline void cpuset_online(cpu_set_t *set)
{
	int n = ncpus_online();

	CPU_ZERO(set);
	for (int c = 0; c < n + 8 && c < CPU_SETSIZE; c++)
		if (cpu_is_online(c) && (c < n || c == 0))
			CPU_SET(c, set);
}

static inline void cpuset_from_bits(cpu_set_t *set, uint64_t bits)
{
	CPU_ZERO(set);
	for (int c = 0; c < 64; c++)
		if (bits >> c & 1)
			CPU_SET(c, set);
}

static inline uint64_t cpuset_bits(const cpu_set_t *set)
{
	uint64_t b = 0;

	for (int c = 0; c < 64; c++)
		if (CPU_ISSET(c, set))
			b |= 1ULL << c;
	return b;
}

/* "0,2-3" style text of a CPU bit mask (static buffer, one call per printf). */
static inline const char *bits_str(uint64_t b, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int c = 0; c < 64 && o + 8 < len; c++) {
		if (!(b >> c & 1))
			continue;
		int e = c;

		while (e + 1 < 64 && (b >> (e + 1) & 1))
			e++;
		o += snprintf(buf + o, len - o, "%s%d", o ? "," : "", c);
		if (e > c)
			o += snprintf(buf + o, len - o, "-%d", e);
		c = e;
	}
	return buf;
}

/*
 * A spinning hog's shared slot: it publishes its loop count, the CLOCK_MONOTONIC
 * of its last pass and the CPU of its last pass (sched_getcpu() every pass).
 */
struct spin_slot {
	volatile uint64_t iters;
	volatile int64_t last_ns;
	volatile int cpu;
	volatile int stop;
	char pad[64 - 24];
};

static inline void spin_loop(struct spin_slot *s, int64_t max_ns)
{
	int64_t start = now_ns();
	uint64_t n = 0;

	for (;;) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		int64_t t = now_ns();

		s->cpu = sched_getcpu();
		s->last_ns = t;
		s->iters = ++n;
		if (s->stop || t - start > max_ns)
			_exit(0);
	}
}

/*
 * Fork a child that blocks on a gate pipe until gate_open(); before that the
 * parent sets its affinity to @mask (NULL: all online CPUs) and leaves its
 * policy as inherited (a SCHED_FIFO reset-on-fork controller forks SCHED_NORMAL
 * nice 0 children). The child then runs @body(@arg) and must _exit().
 * Returns the pid; *gate = the write end to open it with.
 */
static inline pid_t spawn_gated(void (*body)(void *), void *arg, const cpu_set_t *mask, int *gate)
{
	int fd[2];
	char go = 0;
	cpu_set_t all;
	pid_t pid;

	if (pipe(fd))
		ktap_bail("pipe: %s", strerror(errno));
	pid = fork_child();
	if (pid == 0) {
		close(fd[1]);
		if (read(fd[0], &go, 1) != 1 || go != 'g')
			_exit(1);
		close(fd[0]);
		body(arg);
		_exit(0);
	}
	close(fd[0]);
	wait_blocked(pid, 300 * NSEC_PER_MSEC);
	if (!mask) {
		cpuset_online(&all);
		mask = &all;
	}
	if (sched_setaffinity(pid, sizeof(*mask), mask))
		ktap_bail("sched_setaffinity(%d): %s", (int)pid, strerror(errno));
	*gate = fd[1];
	return pid;
}

static inline void gate_open(int *gate)
{
	char go = 'g';

	if (*gate < 0)
		return;
	if (write(*gate, &go, 1) != 1)
		ktap_bail("gate write: %s", strerror(errno));
	close(*gate);
	*gate = -1;
}

struct spin_arg {
	struct spin_slot *slot;
	int64_t max_ns;
};

static inline void spin_body(void *a)
{
	struct spin_arg *sa = a;

	spin_loop(sa->slot, sa->max_ns);
}

/* Runtime (ns) of @pid from /proc/<pid>/schedstat, or -1. */
static inline long long task_runtime_ns(pid_t pid)
{
	long long run = -1;

	return schedstat_read(pid, &run, NULL, NULL) ? -1 : run;
}

/* se.nr_migrations of @pid, or -1. */
static inline long long task_migrations(pid_t pid)
{
	long long v = -1;

	return sched_field(pid, "se.nr_migrations", &v) ? -1 : v;
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

#endif /* LAB_SMP_H */
