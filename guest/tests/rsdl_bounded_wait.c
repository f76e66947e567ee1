// SPDX-License-Identifier: GPL-2.0
/*
 * rsdl_bounded_wait - rsdl.md "Bounded wait" and "No starvation".
 *
 * CPU-bound hogs pinned to one CPU read CLOCK_MONOTONIC in a tight loop; a
 * jump of more than 50 us between two reads is time spent runnable but not
 * running. Per task the longest such gap inside the measuring window (also
 * counting window start -> first run and last run -> window end, so a task
 * that never runs shows the whole window) is compared with the bound:
 *   CPU-bound SCHED_NORMAL only:  sum_{q != p} E(q) + k ticks   (k = tasks)
 *   with SCHED_IDLE in the mix:   2 x sum_{q != p} (E(q) + quota(q))
 * E(q) = usable_slots(q) x quota(q) from rsdl_spec.h at the rr_interval set
 * for the mix (small values keep the rotations, and the test, short).
 * The window covers at least 3 rotations (sum of all E), so every task's
 * longest wait is observed at least twice.
 *
 *  1. mixed_nice: nice 0, 5, 10, 19, -10, 0 at rr_interval 2.
 *  2. nice19_vs_three_nice_m20: nice 19 beside three nice -20 at rr_interval 1.
 *  3. idle_and_nice19_vs_three_nice_m20: SCHED_IDLE + nice 19 + three nice -20
 *     at rr_interval 1, sleeper bound (SCHED_IDLE shares level 39).
 */
#include "util.h"

#define MAXT 8

struct mix {
	const char *name;
	int rr;
	int sleeper_bound;
	int n;
	struct rsdl_task t[MAXT];
};

static const struct mix mixes[] = {
	{ "mixed_nice", 2, 0, 6,
	  { { SCHED_OTHER, 0 }, { SCHED_OTHER, 5 }, { SCHED_OTHER, 10 }, { SCHED_OTHER, 19 },
	    { SCHED_OTHER, -10 }, { SCHED_OTHER, 0 } } },
	{ "nice19_vs_three_nice_m20", 1, 0, 4,
	  { { SCHED_OTHER, 19 }, { SCHED_OTHER, -20 }, { SCHED_OTHER, -20 },
	    { SCHED_OTHER, -20 } } },
	{ "idle_and_nice19_vs_three_nice_m20", 1, 1, 5,
	  { { SCHED_IDLE, 0 }, { SCHED_OTHER, 19 }, { SCHED_OTHER, -20 }, { SCHED_OTHER, -20 },
	    { SCHED_OTHER, -20 } } },
};

static void run_mix(const struct mix *m, int cpu)
{
	struct hog_slot *s = shared_alloc(sizeof(*s) * m->n);
	struct ktap_sub sub = { 0 };
	int64_t sum = 0, window, ws, we;
	pid_t pid[MAXT];
	int r;

	r = rr_interval_set(m->rr);
	if (r) {
		ktap_fail(m->name, "cannot set rr_interval %d: %s", m->rr, strerror(-r));
		return;
	}
	for (int i = 0; i < m->n; i++)
		sum += rsdl_entitlement_ns(m->t[i].policy, m->t[i].nice, m->rr);
	window = 3 * sum + 200 * NSEC_PER_MSEC;
	if (window < 1500 * NSEC_PER_MSEC)
		window = 1500 * NSEC_PER_MSEC;
	for (int i = 0; i < m->n; i++) {
		struct task_cfg c = { .cpu = cpu, .policy = m->t[i].policy, .nice = m->t[i].nice };

		pid[i] = spawn_hog(&c, &s[i], HOG_GAP, window + 10 * NSEC_PER_SEC);
	}
	if (hogs_wait_ready(s, m->n, 5 * NSEC_PER_SEC)) {
		ktap_fail(m->name, "hogs did not start");
		goto out;
	}
	sleep_ms(300);
	ws = now_ns() + 10 * NSEC_PER_MSEC;
	we = ws + window;
	for (int i = 0; i < m->n; i++) {
		s[i].win_end = we;
		s[i].win_start = ws;
	}
	sleep_until_ns(we + 50 * NSEC_PER_MSEC);
	ktap_diag("%s: rr_interval %d ms, sum E %.0f ms, window %.0f ms on CPU %d, %s bound",
		  m->name, m->rr, MS(sum), MS(window), cpu,
		  m->sleeper_bound ? "sleeper" : "CPU-bound");
	ktap_diag("  policy nice   E(ms)  bound(ms)  max_wait(ms)  gaps");
	for (int i = 0; i < m->n; i++) {
		int64_t bound = m->sleeper_bound ? rsdl_sleeper_bound_ns(m->t, m->n, i, m->rr)
						 : rsdl_wait_bound_ns(m->t, m->n, i, m->rr);
		int64_t worst = s[i].max_gap, first = s[i].first_in_win, last = s[i].last_in_win;

		if (!first) {
			worst = window;
		} else {
			if (first - ws > worst)
				worst = first - ws;
			if (we - last > worst)
				worst = we - last;
		}
		ktap_diag("  %-6s %4d %7.1f %10.1f %13.2f %5lld", policy_name(m->t[i].policy),
			  m->t[i].nice,
			  MS(rsdl_entitlement_ns(m->t[i].policy, m->t[i].nice, m->rr)), MS(bound),
			  MS(worst), (long long)s[i].ngaps);
		ktap_expect(&sub, first != 0, "%s nice %d never ran in the window",
			    policy_name(m->t[i].policy), m->t[i].nice);
		ktap_expect(&sub, worst <= bound, "%s nice %d waited %.2f ms, bound %.2f ms",
			    policy_name(m->t[i].policy), m->t[i].nice, MS(worst), MS(bound));
	}
	ktap_sub_end(&sub, m->name);
out:
	for (int i = 0; i < m->n; i++)
		kill_child(pid[i]);
	munmap(s, sizeof(*s) * m->n);
}

int main(void)
{
	int cpu = test_cpu();

	ktap_plan("rsdl_bounded_wait", 3);
	ktap_watchdog(120);
	ktap_diag("scheduler: %s, %d CPUs online, hogs on CPU %d", sched_name(), ncpus_online(),
		  cpu);
	if (!sched_is_rsdl())
		ktap_diag("RSDL is not enabled: the bounds below are RSDL's and are expected to fail");
	become_controller_or_bail();
	for (unsigned int i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
		run_mix(&mixes[i], cpu);
	ktap_finish();
}
