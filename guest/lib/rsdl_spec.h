/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rsdl_spec.h - expected values, computed from the formulas of the spec,
 * Documentation/scheduler/sched-rsdl.rst (RSDL 0.30: the priority matrix,
 * quota, E(p), and the Share and Bounded wait guarantees) and, for
 * comparison runs on stock kernels, from EEVDF's sched_prio_to_weight table.
 *
 * Nothing here comes from a measurement. Every test takes its expected
 * numbers from these functions, with rr_interval (ms) as an input.
 */
#ifndef LAB_RSDL_SPEC_H
#define LAB_RSDL_SPEC_H

#include <sched.h>
#include <stdint.h>

#ifndef SCHED_BATCH
#define SCHED_BATCH 3
#endif
#ifndef SCHED_IDLE
#define SCHED_IDLE 5
#endif

enum {
	RSDL_LEVELS = 40,		/* PRIO_RANGE: dynamic levels 0..39 */
	RSDL_IDLE_LEVEL = 39,		/* SCHED_IDLE only ever uses level 39 */
	RSDL_RR_DEFAULT_MS = 6,		/* default /proc/sys/kernel/rr_interval */
	RSDL_RR_MIN_MS = 1,
	RSDL_RR_MAX_MS = 1000,
};

#define RSDL_TICK_NS 1000000LL		/* HZ=1000 on both lab kernels */
#define RSDL_ALL_LEVELS ((1ULL << RSDL_LEVELS) - 1)

/*
 * Matrix row of a nice level, exactly as the seed patch computes it in
 * sched_init(): bit L set = level L pre-marked as used (not usable).
 * PRIO_RANGE = 40, so PRIO_RANGE * PRIO_RANGE = 1600.
 */
static inline uint64_t rsdl_row(int nice)
{
	int i = nice + 20, j, k;
	uint64_t row;

	if (i < 20) {
		row = 0;
		j = RSDL_LEVELS * RSDL_LEVELS / (i + 1);
		for (k = j; k < RSDL_LEVELS * RSDL_LEVELS; k += j)
			row |= 1ULL << (k / RSDL_LEVELS);
	} else if (i == 20) {
		row = RSDL_ALL_LEVELS;
		for (k = 1; k < RSDL_LEVELS; k += 2)
			row &= ~(1ULL << k);
	} else {
		row = RSDL_ALL_LEVELS;
		j = RSDL_LEVELS * RSDL_LEVELS / (RSDL_LEVELS - i + 1);
		for (k = j; k < RSDL_LEVELS * RSDL_LEVELS; k += j)
			row &= ~(1ULL << (k / RSDL_LEVELS));
	}
	return row;
}

/* Row for a policy: SCHED_IDLE may use level 39 only. */
static inline uint64_t rsdl_row_policy(int policy, int nice)
{
	if (policy == SCHED_IDLE)
		return RSDL_ALL_LEVELS & ~(1ULL << RSDL_IDLE_LEVEL);
	return rsdl_row(nice);
}

static inline int rsdl_level_usable(uint64_t row, int level)
{
	return level >= 0 && level < RSDL_LEVELS && !((row >> level) & 1);
}

static inline int rsdl_usable_slots_row(uint64_t row)
{
	return RSDL_LEVELS - __builtin_popcountll(row & RSDL_ALL_LEVELS);
}

static inline int rsdl_usable_slots(int nice)
{
	return rsdl_usable_slots_row(rsdl_row(nice));
}

static inline int rsdl_usable_slots_policy(int policy, int nice)
{
	return rsdl_usable_slots_row(rsdl_row_policy(policy, nice));
}

/* First usable level >= @from in @row, or -1 if none is left. */
static inline int rsdl_first_slot(uint64_t row, int from)
{
	for (int l = from < 0 ? 0 : from; l < RSDL_LEVELS; l++)
		if (rsdl_level_usable(row, l))
			return l;
	return -1;
}

/*
 * quota(nice) in ns: nice >= 0: rr_interval; nice < 0:
 * max(rr_interval, rr_interval_ns * nice * nice / 40), 64-bit, no rounding.
 * SCHED_IDLE and SCHED_BATCH use the same quota rule (by their nice).
 */
static inline int64_t rsdl_quota_ns(int nice, int rr_ms)
{
	int64_t rr = (int64_t)rr_ms * 1000000LL;
	int64_t q;

	if (nice >= 0)
		return rr;
	q = rr * nice * nice / 40;
	return q > rr ? q : rr;
}

/* Per-rotation entitlement E(p) = usable_slots(p) * quota(p), ns. */
static inline int64_t rsdl_entitlement_ns(int policy, int nice, int rr_ms)
{
	return (int64_t)rsdl_usable_slots_policy(policy, nice) *
	       rsdl_quota_ns(nice, rr_ms);
}

/* A task description for the share / bound formulas. */
struct rsdl_task {
	int policy;	/* SCHED_OTHER, SCHED_BATCH or SCHED_IDLE */
	int nice;
};

/* Expected CPU share (0..1) of task @p among @n CPU-bound tasks on one CPU. */
static inline double rsdl_share(const struct rsdl_task *t, int n, int p, int rr_ms)
{
	int64_t sum = 0;

	for (int i = 0; i < n; i++)
		sum += rsdl_entitlement_ns(t[i].policy, t[i].nice, rr_ms);
	return (double)rsdl_entitlement_ns(t[p].policy, t[p].nice, rr_ms) / (double)sum;
}

/*
 * Bounded wait, CPU-bound SCHED_NORMAL tasks only:
 *   sum_{q != p} E(q) + one tick per task on the CPU.
 */
static inline int64_t rsdl_wait_bound_ns(const struct rsdl_task *t, int n, int p, int rr_ms)
{
	int64_t b = 0;

	for (int i = 0; i < n; i++)
		if (i != p)
			b += rsdl_entitlement_ns(t[i].policy, t[i].nice, rr_ms);
	return b + (int64_t)n * RSDL_TICK_NS;
}

/*
 * Bounded wait with sleepers (or SCHED_IDLE tasks sharing level 39) in the mix:
 *   2 * sum_{q != p} (E(q) + quota(q)).
 */
static inline int64_t rsdl_sleeper_bound_ns(const struct rsdl_task *t, int n, int p, int rr_ms)
{
	int64_t b = 0;

	for (int i = 0; i < n; i++)
		if (i != p)
			b += rsdl_entitlement_ns(t[i].policy, t[i].nice, rr_ms) +
			     rsdl_quota_ns(t[i].nice, rr_ms);
	return 2 * b;
}

/* Row as the spec prints it: level 0 leftmost, '1' = not usable. */
static inline void rsdl_row_str(uint64_t row, char out[RSDL_LEVELS + 1])
{
	for (int l = 0; l < RSDL_LEVELS; l++)
		out[l] = ((row >> l) & 1) ? '1' : '0';
	out[RSDL_LEVELS] = '\0';
}

/* ---- EEVDF (stock 6.12) ------------------------------------------------ */

/* kernel/sched/core.c sched_prio_to_weight[], nice -20..19 */
static const int eevdf_weights[40] = {
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
};
#define EEVDF_WEIGHT_IDLE 3	/* WEIGHT_IDLEPRIO */

static inline int eevdf_weight(int policy, int nice)
{
	if (policy == SCHED_IDLE)
		return EEVDF_WEIGHT_IDLE;
	return eevdf_weights[nice + 20];
}

/* Expected CPU share (0..1): weight(p) / sum of weights on the CPU. */
static inline double eevdf_share(const struct rsdl_task *t, int n, int p)
{
	long sum = 0;

	for (int i = 0; i < n; i++)
		sum += eevdf_weight(t[i].policy, t[i].nice);
	return (double)eevdf_weight(t[p].policy, t[p].nice) / (double)sum;
}

/* ---- both ------------------------------------------------------------------ */

/*
 * Expected share of one CPU of a CPU-bound SCHED_NORMAL task at @nice beside
 * @others (at most 64) CPU-bound tasks at @onice: rsdl_share() if @rsdl, else
 * eevdf_share().
 */
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

#endif /* LAB_RSDL_SPEC_H */
