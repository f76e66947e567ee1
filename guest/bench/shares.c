// SPDX-License-Identifier: GPL-2.0
/*
 * shares - CPU shares of CPU-bound hogs of the given nice levels, against the
 * running scheduler's own table (RSDL: E = usable_slots x quota from the spec
 * formulas; EEVDF: sched_prio_to_weight), plus the smallest share any hog got in
 * any 1 s window (starvation view).
 *
 *   shares -n NAME -i NICE[,NICE...] [-p CPU] [-d seconds]
 *
 * -p CPU pins every hog to that CPU (expected share = entitlement / sum over the
 * set); without -p the hogs spread over all CPUs and the expected share of hog p is
 * ncpus x its entitlement / sum (exact for equal nice levels).
 * Share = work units done (calibrated busy loop) / elapsed time, as % of one CPU.
 * Output: one "share ..." line per hog and one "shares ..." summary line.
 */
#include "util.h"

int main(int argc, char **argv)
{
	const char *name = "shares";
	int nice[64], n = 0, cpu = -1, secs = 10, opt, nc = ncpus_online();
	int rsdl = sched_is_rsdl(), rr = rr_interval_or_default();
	double share[64], min1s, lpm = loops_per_ms();
	struct rsdl_task t[64];
	struct unit_hogs h;
	char *s;

	while ((opt = getopt(argc, argv, "n:i:p:d:")) != -1) {
		switch (opt) {
		case 'n': name = optarg; break;
		case 'p': cpu = atoi(optarg); break;
		case 'd': secs = atoi(optarg); break;
		case 'i':
			for (s = strtok(optarg, ","); s && n < 64; s = strtok(NULL, ","))
				nice[n++] = atoi(s);
			break;
		default: return 2;
		}
	}
	if (!n)
		return 2;
	for (int i = 0; i < n; i++) {
		t[i].policy = SCHED_OTHER;
		t[i].nice = nice[i];
	}
	unit_hogs_start(&h, n, nice, cpu, lpm);
	struct sched_param sp = { .sched_priority = 50 };
	sched_setscheduler(0, SCHED_FIFO, &sp);
	usleep(500000);
	unit_hogs_measure(&h, secs, share, &min1s);
	unit_hogs_stop(&h);

	double k = cpu >= 0 ? 1 : nc, worst = 1e9;
	for (int i = 0; i < n; i++) {
		double er = 100 * k * rsdl_share(t, n, i, rr), ee = 100 * k * eevdf_share(t, n, i);
		double ex = rsdl ? er : ee;

		printf("share name=%s sched=%s hog=%d nice=%d pinned=%d share_pct=%.3f expected_pct=%.3f "
		       "rsdl_table_pct=%.3f eevdf_table_pct=%.3f\n",
		       name, rsdl ? "rsdl" : "eevdf", i, nice[i], cpu >= 0, 100 * share[i], ex, er, ee);
		if (share[i] / ex < worst)
			worst = share[i] * 100 / ex;
	}
	printf("shares name=%s sched=%s hogs=%d pinned=%d secs=%d jain=%.4f min1s_pct=%.3f "
	       "worst_vs_expected=%.3f\n",
	       name, rsdl ? "rsdl" : "eevdf", n, cpu >= 0, secs, jain_index(share, n), 100 * min1s, worst);
	return 0;
}
