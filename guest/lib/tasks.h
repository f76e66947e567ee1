/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tasks.h - CPUs and affinity, scheduling policies (sched_setattr, nice),
 * shared memory and child processes that die with the parent.
 */
#ifndef LAB_TASKS_H
#define LAB_TASKS_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "ktap.h"
#include "procfs.h"
#include "timing.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

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

/* "1,3-5" (a sysfs or cmdline CPU list) -> bit mask of CPUs < 64; stops at the first
 * other character */
static inline uint64_t cpulist_bits(const char *s)
{
	uint64_t m = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;

		if (end == s)
			break;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s)
				break;
		}
		for (long c = a; c <= b && c < 64; c++)
			if (c >= 0)
				m |= 1ULL << c;
		s = end;
		if (*s != ',')
			break;
		s++;
	}
	return m;
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

/* ---- scheduling policies ------------------------------------------------------ */

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

/* setpriority() on the caller, fatal on failure (the bench programs) */
static inline void set_nice(int nice)
{
	if (setpriority(PRIO_PROCESS, 0, nice))
		die("setpriority");
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

/* ---- shared memory, children ------------------------------------------------------ */

static inline void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		lab_fatal("mmap(%zu): %s", size, strerror(errno));
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

/*
 * fork_child() with a gate: the child blocks on a pipe until the parent
 * writes 'g' to *@gate (then 0 is returned in the child; it _exit(1)s if the
 * pipe closes instead). The parent waits (up to 300 ms) until the child does
 * block, so that what it sets meanwhile (policy, affinity) is in force before
 * the child runs again; it gets the pid and *@gate, the write end.
 */
static inline pid_t fork_gated(int *gate)
{
	int fd[2];
	char go = 0;
	pid_t pid;

	if (pipe(fd))
		ktap_bail("pipe: %s", strerror(errno));
	pid = fork_child();
	if (pid == 0) {
		close(fd[1]);
		if (read(fd[0], &go, 1) != 1 || go != 'g')
			_exit(1);
		close(fd[0]);
		return 0;
	}
	close(fd[0]);
	wait_blocked(pid, 300 * NSEC_PER_MSEC);
	*gate = fd[1];
	return pid;
}

#endif /* LAB_TASKS_H */
