// SPDX-License-Identifier: GPL-2.0
/*
 * nice_share - CPU shares of CPU-bound tasks of mixed nice pinned to one CPU.
 *
 * Expected share of task p (sched-rsdl.rst, Share), by the running scheduler:
 *   RSDL:  E(p) / sum E,  E = usable_slots(nice) * quota(nice, rr_interval)
 *   EEVDF: weight(nice) / sum weight  (sched_prio_to_weight)
 * A failure means the scheduler does not divide a CPU by its own table (a
 * scheduler ignoring nice gives 50/50 and fails every mixed row; one using
 * the other table fails 0/5, 0/10, -10/0: RSDL 57/64/78 % vs EEVDF
 * 75/90/90 % for the first task).
 *
 * Measured share = the hog's runtime (/proc/<pid>/schedstat) / all hogs'
 * runtime over the window, asserted within +-3 points (the lab's tolerance
 * for shares). Cross-check that does not trust the kernel's accounting:
 * loop passes / all hogs' loop passes (every hog runs the same loop on the
 * same CPU), within +-6 points, to catch gross accounting errors (time
 * charged to the wrong task). Twice the tolerance: the loop count also loses
 * each switch-in's cost (cache and TLB refill, the return to user space),
 * which is charged as runtime but does no loop work and hits the most often
 * switched task hardest: 2.8 points for nice 5 of 0/5 on one CPU with the
 * lab's debug kernel under EEVDF. The cross-check is asserted only where the
 * guest's clock is exact (lab.clock=icount): on the host's clock, time the
 * host takes a vCPU thread away is charged to the running hog as runtime
 * and does no loop work.
 */
#include "util.h"

#define SETTLE_NS (500 * NSEC_PER_MSEC)
#define WINDOW_NS (3000 * NSEC_PER_MSEC)
#define TOL_POINTS 3.0
#define TOL_LOOP_POINTS 6.0
/*
 * RSDL: rr_interval 2 ms. The expected shares depend on rr only through
 * quota's max() (|nice| < 7), which none of these mixes hits except
 * -10 (2.5 x rr) and -20 (10 x rr), both exact. The longest rotation is
 * then 40 x 20 + 2 = 802 ms (-20/19), so the 3 s window spans several
 * whole rotations and a partial one moves a share by < 1 point.
 */
#define RSDL_RR_MS 2

static const int mixes[][5] = {
	/* count, nices... */
	{ 2, 0, 0 },
	{ 2, 0, 5 },
	{ 2, 0, 10 },
	{ 2, 0, 19 },
	{ 2, -10, 0 },
	{ 2, -20, 19 },
	{ 4, 0, 0, 0, 0 },
};
#define NMIXES (int)(sizeof(mixes) / sizeof(mixes[0]))

static void run_mix(int m, int rsdl, int rr, int cpu)
{
	int n = mixes[m][0];
	struct rsdl_task t[4];
	struct hog_slot *s = shared_alloc(sizeof(*s) * n);
	pid_t pid[4];
	uint64_t i0[4], i1[4], isum = 0;
	long long r0[4], r1[4], rsum = 0;
	char name[64] = "mix";
	struct ktap_sub sub = { 0 };
	int64_t t0, t1;

	for (int i = 0; i < n; i++) {
		char part[16];

		t[i].policy = SCHED_OTHER;
		t[i].nice = mixes[m][1 + i];
		snprintf(part, sizeof(part), "_%d", t[i].nice);
		strncat(name, part, sizeof(name) - strlen(name) - 1);
	}
	for (int i = 0; i < n; i++) {
		struct task_cfg c = { .cpu = cpu, .policy = SCHED_OTHER, .nice = t[i].nice };

		pid[i] = spawn_hog(&c, &s[i], HOG_COUNT, 30 * NSEC_PER_SEC);
	}
	if (hogs_wait_ready(s, n, 5 * NSEC_PER_SEC)) {
		ktap_fail(name, "hogs did not start");
		goto out;
	}
	sleep_ns(SETTLE_NS);
	for (int i = 0; i < n; i++) {
		i0[i] = s[i].iters;
		schedstat_read(pid[i], &r0[i], NULL, NULL);
	}
	t0 = now_ns();
	sleep_ns(WINDOW_NS);
	for (int i = 0; i < n; i++) {
		i1[i] = s[i].iters;
		schedstat_read(pid[i], &r1[i], NULL, NULL);
	}
	t1 = now_ns();
	for (int i = 0; i < n; i++) {
		isum += i1[i] - i0[i];
		rsum += r1[i] - r0[i];
	}
	ktap_diag("%s: window %.0f ms on CPU %d, hogs ran %.1f%% of it (schedstat)", name,
		  MS(t1 - t0), cpu, 100.0 * rsum / (t1 - t0));
	ktap_diag("  nice  expected%%  measured%%  (loop count%%%s)",
		  guest_clock_exact() ? "" : ", not asserted on the host clock");
	for (int i = 0; i < n; i++) {
		double exp = 100.0 * (rsdl ? rsdl_share(t, n, i, rr) : eevdf_share(t, n, i));
		double loop = isum ? 100.0 * (i1[i] - i0[i]) / isum : 0;
		double got = rsum ? 100.0 * (r1[i] - r0[i]) / rsum : 0;

		ktap_diag("  %4d  %9.2f  %9.2f  (%6.2f)", t[i].nice, exp, got, loop);
		ktap_expect(&sub, got >= exp - TOL_POINTS && got <= exp + TOL_POINTS,
			    "nice %d: measured %.2f%%, expected %.2f%% +-%.0f", t[i].nice, got,
			    exp, TOL_POINTS);
		ktap_expect(&sub, !guest_clock_exact() ||
			    (loop >= exp - TOL_LOOP_POINTS && loop <= exp + TOL_LOOP_POINTS),
			    "nice %d: loop-count share %.2f%%, expected %.2f%% +-%.0f", t[i].nice,
			    loop, exp, TOL_LOOP_POINTS);
	}
	ktap_expect(&sub, isum > 0 && rsum > 0, "no progress at all");
	ktap_sub_end(&sub, name);
out:
	for (int i = 0; i < n; i++)
		kill_child(pid[i]);
	munmap(s, sizeof(*s) * n);
}

int main(void)
{
	int rsdl = sched_is_rsdl(), rr = 0, cpu = test_cpu();

	ktap_plan("nice_share", NMIXES);
	ktap_watchdog(120);
	ktap_diag("scheduler: %s, %d CPUs online, hogs on CPU %d", sched_name(), ncpus_online(),
		  cpu);
	become_controller_or_bail();
	if (rsdl) {
		rr_interval_set_or_bail(RSDL_RR_MS);
		rr = RSDL_RR_MS;
		ktap_diag("RSDL expectations: E = usable_slots x quota at rr_interval=%d ms", rr);
	} else {
		ktap_diag("EEVDF expectations: weight / sum of weights");
	}
	for (int m = 0; m < NMIXES; m++)
		run_mix(m, rsdl, rr, cpu);
	ktap_finish();
}
