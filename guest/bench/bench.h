/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench.h - helpers shared by the make demo benchmark programs (guest only):
 * time, the calibrated busy loop, hogs counting their progress in shared
 * memory, percentiles, Jain's index and the expected shares of both schedulers
 * (rsdl_spec.h: RSDL from the spec formulas, EEVDF from sched_prio_to_weight).
 *
 * Work unit: the busy loop is calibrated once per boot by `calibrate`, which
 * writes loops per ms to /tmp/loops_per_ms. It is measured while every vCPU is
 * busy (one spinner per CPU), because under QEMU -icount the vCPUs share one host
 * thread: a vCPU runs about half as fast in guest time when the other one is busy
 * too. "1 ms of work" is therefore 1 ms of CPU time with all vCPUs busy, the state
 * of every loaded scenario. All outputs are "key=value" lines the host parses.
 */
#ifndef LAB_BENCH_H
#define LAB_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rsdl_spec.h"

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
#define LOOPS_FILE "/tmp/loops_per_ms"

static inline int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * NS_PER_S + t.tv_nsec;
}

static inline void sleep_until(int64_t abs_ns)
{
	struct timespec t = { .tv_sec = abs_ns / NS_PER_S, .tv_nsec = abs_ns % NS_PER_S };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static inline void die(const char *what)
{
	fprintf(stderr, "error: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The busy loop: @n iterations of a loop the compiler cannot remove. */
static inline void burn_loops(uint64_t n)
{
	for (volatile uint64_t i = 0; i < n; i++)
		;
}

static inline double loops_per_ms(void)
{
	FILE *f = fopen(LOOPS_FILE, "r");
	double v = 0;

	if (!f || fscanf(f, "%lf", &v) != 1 || v <= 0) {
		fprintf(stderr, "error: no calibration in %s (run calibrate first)\n", LOOPS_FILE);
		exit(1);
	}
	fclose(f);
	return v;
}

/* Burn @ms of calibrated work. */
static inline void burn_ms(double lpm, double ms)
{
	burn_loops((uint64_t)(lpm * ms));
}

static inline void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	memset(p, 0, len);
	return p;
}

static inline void pin_cpu(pid_t pid, int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(pid, sizeof(s), &s))
		die("sched_setaffinity");
}

static inline void set_nice(int nice)
{
	if (setpriority(PRIO_PROCESS, 0, nice))
		die("setpriority");
}

static inline int ncpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

static inline int rsdl_enabled(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/kernel/rsdl/state", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strncmp(buf, "enabled", 7) == 0;
}

static inline int rr_interval_ms(void)
{
	int v = RSDL_RR_DEFAULT_MS;
	FILE *f = fopen("/proc/sys/kernel/rr_interval", "r");

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = RSDL_RR_DEFAULT_MS;
		fclose(f);
	}
	return v;
}

/* ---- hogs: busy loops counting work units (1 unit = 0.1 ms of work) ------- */

#define UNIT_MS 0.1

struct hogs {
	int n;
	pid_t pid[64];
	volatile uint64_t *count;	/* shared: units done per hog */
};

/* Start @n hogs at nice @nice[i] (pinned to @cpu if cpu >= 0). */
static inline void hogs_start(struct hogs *h, int n, const int *nice, int cpu, double lpm)
{
	uint64_t unit = (uint64_t)(lpm * UNIT_MS);

	h->n = n;
	h->count = shared_alloc(sizeof(uint64_t) * (n ? n : 1));
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			die("fork");
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (cpu >= 0)
				pin_cpu(0, cpu);
			set_nice(nice[i]);
			for (;;) {
				burn_loops(unit);
				h->count[i]++;
			}
		}
		h->pid[i] = p;
	}
}

static inline void hogs_snap(const struct hogs *h, uint64_t *out)
{
	for (int i = 0; i < h->n; i++)
		out[i] = h->count[i];
}

static inline void hogs_stop(struct hogs *h)
{
	for (int i = 0; i < h->n; i++)
		kill(h->pid[i], SIGKILL);
	for (int i = 0; i < h->n; i++)
		waitpid(h->pid[i], NULL, 0);
}

/*
 * Sample the hogs once per second for @secs seconds. @share[i]: hog i's share of one CPU
 * over the whole window; @min1s: the smallest share any hog got in any 1 s window.
 */
static inline void hogs_measure(const struct hogs *h, int secs, double *share, double *min1s)
{
	uint64_t first[64], prev[64], cur[64] = { 0 };
	int64_t t0 = now_ns(), tp = t0, t = t0;

	*min1s = 1e9;
	hogs_snap(h, first);
	memcpy(prev, first, sizeof(prev));
	for (int s = 1; s <= secs; s++) {
		sleep_until(t0 + s * NS_PER_S);
		hogs_snap(h, cur);
		t = now_ns();
		for (int i = 0; i < h->n; i++) {
			double sh = (cur[i] - prev[i]) * UNIT_MS * NS_PER_MS / (double)(t - tp);

			if (sh < *min1s)
				*min1s = sh;
		}
		memcpy(prev, cur, sizeof(prev));
		tp = t;
	}
	for (int i = 0; i < h->n; i++)
		share[i] = (cur[i] - first[i]) * UNIT_MS * NS_PER_MS / (double)(t - t0);
	if (!h->n)
		*min1s = 0;
}

/* ---- percentiles ------------------------------------------------------------ */

static inline int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* @v sorted in place; nearest-rank percentile @p (0..100). */
static inline int64_t pct(int64_t *v, int n, double p)
{
	int k;

	if (n <= 0)
		return 0;
	k = (int)ceil(p / 100.0 * n) - 1;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

/* ---- expected shares ---------------------------------------------------------- */

/* Share of one CPU of a task at @nice beside @others CPU-bound tasks at @onice. */
static inline double expected_share(int rsdl, int nice, int others, int onice, int rr)
{
	struct rsdl_task t[65];

	if (others > 64)
		others = 64;
	t[0].policy = SCHED_OTHER;
	t[0].nice = nice;
	for (int i = 1; i <= others; i++) {
		t[i].policy = SCHED_OTHER;
		t[i].nice = onice;
	}
	return rsdl ? rsdl_share(t, others + 1, 0, rr) : eevdf_share(t, others + 1, 0);
}

#endif /* LAB_BENCH_H */
