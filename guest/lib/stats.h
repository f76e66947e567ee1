/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - percentiles, latency summaries, Jain's fairness index and
 * deterministic pseudo-random numbers.
 */
#ifndef LAB_STATS_H
#define LAB_STATS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Percentile (0..100) of @n values; sorts @v in place. The value at index
 * round(pct / 100 * (n - 1)): the tests' percentiles (lat_summary()).
 */
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
 * Nearest-rank percentile @p (0..100) of @n values already sorted (cmp_i64): the
 * value at index ceil(p / 100 * n) - 1. The bench programs' percentiles (snag).
 */
static inline int64_t percentile_nearest_rank(const int64_t *v, int n, double p)
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

struct lat_stats {
	int64_t p50, p90, p99, max;
};

/* p50, p90, p99 and max of @n latencies (percentile(): sorts @lat in place). */
static inline struct lat_stats lat_summary(int64_t *lat, int n)
{
	struct lat_stats st;

	st.p50 = percentile(lat, n, 50);
	st.p90 = percentile(lat, n, 90);
	st.p99 = percentile(lat, n, 99);
	st.max = percentile(lat, n, 100);
	return st;
}

/* Jain's fairness index of @n values: (sum x)^2 / (n sum x^2); 1 = all equal. */
static inline double jain_index(const double *x, int n)
{
	double s = 0, s2 = 0;

	for (int i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	return s2 > 0 ? s * s / (n * s2) : 0;
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

#endif /* LAB_STATS_H */
