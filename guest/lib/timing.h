/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timing.h - clocks, sleeping and busy loops.
 *
 * Every wall time is CLOCK_MONOTONIC in ns (now_ns()). Two busy loops:
 * burn_cpu_ns() spins until the thread has used that much CPU time (the tests'
 * work after a wake); burn_loops()/burn_ms() run a loop count calibrated once
 * per boot (the bench programs' work unit, see loops_per_ms()).
 */
#ifndef LAB_TIMING_H
#define LAB_TIMING_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "ktap.h"

#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL
#define NSEC_PER_USEC 1000LL
#define MS(ns) ((double)(ns) / 1e6)
#define US(ns) ((double)(ns) / 1e3)

static inline int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NSEC_PER_SEC + t->tv_nsec;
}

static inline struct timespec ns_ts(int64_t ns)
{
	struct timespec t = { .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };
	return t;
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

/* CPU time of the whole process (every thread), ns */
static inline int64_t process_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return ts_ns(&t);
}

/* User + system time of a struct rusage, ns */
static inline int64_t rusage_ns(const struct rusage *ru)
{
	return ((int64_t)ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * NSEC_PER_SEC +
	       ((int64_t)ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * NSEC_PER_USEC;
}

/* getrusage(@who) as user + system ns (RUSAGE_SELF, RUSAGE_CHILDREN) */
static inline int64_t getrusage_ns(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return rusage_ns(&ru);
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

/* ---- the calibrated busy loop (bench programs) ------------------------------ */

/*
 * `calibrate` measures the loop once per boot and writes loops per ms to
 * LOOPS_FILE. It is measured while every vCPU is busy (one spinner per CPU),
 * because under QEMU -icount the vCPUs share one host thread: a vCPU runs about
 * half as fast in guest time when the other one is busy too. "1 ms of work" is
 * therefore 1 ms of CPU time with all vCPUs busy, the state of every loaded
 * scenario.
 */
#define LOOPS_FILE "/tmp/loops_per_ms"

/* @n iterations of a loop the compiler cannot remove. */
static inline void burn_loops(uint64_t n)
{
	for (volatile uint64_t i = 0; i < n; i++)
		;
}

/* The calibration in LOOPS_FILE (fatal if there is none). */
static inline double loops_per_ms(void)
{
	FILE *f = fopen(LOOPS_FILE, "r");
	double v = 0;

	if (!f || fscanf(f, "%lf", &v) != 1 || v <= 0)
		lab_fatal("no calibration in %s (run calibrate first)", LOOPS_FILE);
	fclose(f);
	return v;
}

/* Burn @ms of calibrated work (@lpm: loops_per_ms()). */
static inline void burn_ms(double lpm, double ms)
{
	burn_loops((uint64_t)(lpm * ms));
}

#endif /* LAB_TIMING_H */
