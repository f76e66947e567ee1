// SPDX-License-Identifier: GPL-2.0
/*
 * nplus1_share - N+1 unpinned nice-0 hogs on N CPUs for 20 s (SMP balancing;
 * suite.list: smp2, so it runs on the 2- and 4-CPU boots of both schedulers).
 *
 * Expected: N+1 equal CPU-bound tasks on N CPUs are entitled to N/(N+1) of a
 * CPU each (sched-rsdl.rst, SMP: the periodic balance rotates N + 1 tasks
 * over N CPUs instead of pairing the same two for good). A failure means the
 * balancer paired two hogs for good (those two get 0.5, the others 1.0).
 *
 *  1. share_per_hog: every hog's share of a CPU over the 20 s window (runtime
 *     from /proc/<pid>/schedstat / window) is within 0.8 .. 1.2 x N/(N+1).
 *     Jain's fairness index (sum x)^2 / (n sum x^2) of the shares is
 *     printed (1 = perfectly even), with the shares of each 5 s quarter and
 *     the migrations of each hog, which show rotation vs permanent pairing.
 *
 * The same program runs on EEVDF (rsdl=off boots) and prints EEVDF's index:
 * the host reads both from the logs ("jain_index=" lines).
 * The hogs are released together after a gate; the window starts at the
 * release, so the initial placement is part of what is measured. The
 * controller (SCHED_FIFO, CPU 0) sleeps through each quarter and only reads
 * /proc/<pid>/schedstat at its ends.
 */
#include "util.h"

#define WINDOW_NS (20 * NSEC_PER_SEC)
#define PARTS 4
#define MAXH 65

int main(void)
{
	int n = ncpus_online(), nh = n + 1, gate[MAXH];
	struct spin_slot *s;
	struct spin_arg arg[MAXH];
	pid_t pid[MAXH];
	long long run[PARTS + 1][MAXH], mig0[MAXH], mig1[MAXH];
	int64_t t[PARTS + 1];
	double expect, lo, hi, x[MAXH], sum = 0, jain;
	struct ktap_sub sub = { 0 };

	ktap_plan("nplus1_share", 1);
	ktap_watchdog(120);
	if (n < 2 || nh > MAXH)
		ktap_bail("needs 2..%d online CPUs", MAXH - 1);
	expect = (double)n / nh;
	lo = 0.8 * expect;
	hi = 1.2 * expect;
	ktap_diag("scheduler: %s, %d CPUs online, %d nice-0 hogs unpinned, window %.0f s",
		  sched_name(), n, nh, WINDOW_NS / 1e9);
	become_controller_or_bail();
	s = shared_alloc(sizeof(*s) * nh);
	for (int i = 0; i < nh; i++) {
		s[i].cpu = -1;
		arg[i] = (struct spin_arg){ .slot = &s[i], .max_ns = WINDOW_NS + 20 * NSEC_PER_SEC };
		pid[i] = spawn_gated(spin_body, &arg[i], NULL, &gate[i]);
	}
	rsdl_print_migration_counters("before");
	for (int i = 0; i < nh; i++)
		gate_open(&gate[i]);
	for (int p = 0; p <= PARTS; p++) {
		if (p)
			sleep_until_ns(t[0] + WINDOW_NS * p / PARTS);
		t[p] = now_ns();
		for (int i = 0; i < nh; i++) {
			run[p][i] = task_runtime_ns(pid[i]);
			if (p == 0)
				mig0[i] = task_migrations(pid[i]);
			if (p == PARTS)
				mig1[i] = task_migrations(pid[i]);
		}
		t[p] = (t[p] + now_ns()) / 2;
	}
	ktap_diag("hog  share  expected     quarters (5 s each)        migrations");
	for (int i = 0; i < nh; i++) {
		char q[128];
		size_t o = 0;

		x[i] = (run[0][i] < 0 || run[PARTS][i] < 0)
			       ? -1
			       : (double)(run[PARTS][i] - run[0][i]) / (t[PARTS] - t[0]);
		sum += x[i];
		for (int p = 1; p <= PARTS; p++)
			o += snprintf(q + o, sizeof(q) - o, " %.2f",
				      (double)(run[p][i] - run[p - 1][i]) / (t[p] - t[p - 1]));
		ktap_diag("%3d  %.3f  %.3f..%.3f %s  %10lld", i, x[i], lo, hi, q, mig1[i] - mig0[i]);
		ktap_expect(&sub, x[i] >= lo && x[i] <= hi, "hog %d share %.3f outside %.3f..%.3f", i,
			    x[i], lo, hi);
	}
	jain = jain_index(x, nh);
	ktap_diag("expected share N/(N+1) = %d/%d = %.3f, bounds 0.8x..1.2x = %.3f..%.3f", n, nh,
		  expect, lo, hi);
	ktap_diag("sum of shares %.3f (of %d CPUs)", sum, n);
	ktap_diag("jain_index=%.4f sched=%s cpus=%d hogs=%d (1 = even; pairing for good gives %.4f)",
		  jain, sched_name(), n, nh,
		  /* two hogs at 0.5, the rest at 1.0 */
		  (double)n * n / (nh * (0.5 + (n - 1) * 1.0)));
	rsdl_print_migration_counters("after");
	ktap_sub_end(&sub, "share_per_hog");
	for (int i = 0; i < nh; i++)
		s[i].stop = 1;
	for (int i = 0; i < nh; i++)
		kill_child(pid[i]);
	ktap_finish();
}
