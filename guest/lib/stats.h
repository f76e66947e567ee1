/* SPDX-License-Identifier: GPL-2.0 */
/* Statistics shared by the guest tests (lib/) and the demo benchmarks (guest/bench). */
#ifndef RSDL_STATS_H
#define RSDL_STATS_H

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

#endif
