// SPDX-License-Identifier: GPL-2.0
/*
 * rsdl_bounded_wait - sched-rsdl.rst "Bounded wait" and "No starvation".
 *
 * Expected: the bound on the service the others get while task p waits:
 *   CPU-bound SCHED_NORMAL only:  sum_{q != p} E(q) + k ticks   (k = tasks)
 *   with SCHED_IDLE in the mix:   2 x sum_{q != p} (E(q) + quota(q))
 * E(q) = usable_slots(q) x quota(q) from guest/lib/rsdl_spec.h at the
 * rr_interval set for the mix (small values keep the rotations, and the
 * test, short). A failure means a task waited for more than the others'
 * entitlements (a nice 19 or SCHED_IDLE task starved beside nice -20 ones).
 *
 * CPU-bound hogs pinned to one CPU. A wait of task p runs from its switch-out
 * while runnable (sched_switch with prev_state R) to its next switch-in; the
 * kernel's sched_switch events of the measuring window give, for each wait,
 * its length and the time the other hogs of the mix were on the CPU during it
 * (their service), which is what the bound is on. The length adds what is
 * not the mix's to run: the SCHED_FIFO controller, kernel threads, and the
 * switches themselves (under icount every instruction takes guest time); the
 * longest length is printed beside the service. As a cross-check independent
 * of the trace, every hog also reads CLOCK_MONOTONIC in its loop and keeps
 * its longest jump between two reads (its longest wait seen from user space,
 * interrupts included), printed as well. Per task the longest wait inside the
 * window counts, also window start -> first run and last run -> window end,
 * so a task that never runs shows the whole window. The window covers at
 * least 3 rotations (sum of all E), so every task's longest wait is observed
 * at least twice.
 *
 * The bound holds once every hog of the mix is on the CPU. The hogs start
 * one after the other, and each new one starts afresh in the current
 * rotation (rule 1), while a task that already used its slots of that
 * rotation waits on the expired array: its wait can then last the new hogs'
 * whole entitlements plus a rotation (nice 19 beside three nice -20 after a
 * 300 ms settle: first run 1.26 s into the window). So the window opens
 * 2 x sum E + 300 ms after the last hog is ready: a wait still going on then
 * began after every hog was running.
 *
 *  1. mixed_nice: nice 0, 5, 10, 19, -10, 0 at rr_interval 2.
 *  2. nice19_vs_three_nice_m20: nice 19 beside three nice -20 at rr_interval 1.
 *  3. idle_and_nice19_vs_three_nice_m20: SCHED_IDLE + nice 19 + three nice -20
 *     at rr_interval 1, sleeper bound (SCHED_IDLE shares level 39).
 */
#include "swtrace.h"
#include "util.h"

#define MAXT 8
/* Per-CPU trace buffer: ~1500 switches per second of a mix, far below */
#define TRACE_KB 8192

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

/*
 * The waits of the hogs of one mix, from the sched_switch events of its CPU.
 * A run shorter than HOG_GAP_NS between two waits (switched in, out again
 * before reaching user space) does not end the wait: the user-space gap
 * counts such a run as waiting too.
 */
struct waits {
	int n, cpu;
	const pid_t *pid;
	int64_t ws, we, last_t;
	pid_t cur;		/* on the CPU since last_t; 0: not known yet */
	int64_t since[MAXT];	/* waiting since (0: not waiting) */
	int64_t run_from[MAXT];	/* a waiting task's current run began (0: not running) */
	int64_t svc[MAXT];	/* the others' time on the CPU since then */
	int64_t max_len[MAXT], max_svc[MAXT];
	long nwaits[MAXT], events;
};

static int hog_index(const struct waits *w, pid_t p)
{
	for (int i = 0; i < w->n; i++)
		if (w->pid[i] == p)
			return i;
	return -1;
}

/* Time [w->last_t, t) on the CPU went to w->cur: service for the others waiting */
static void waits_advance(struct waits *w, int64_t t)
{
	int who = hog_index(w, w->cur);

	if (who >= 0)
		for (int i = 0; i < w->n; i++)
			if (i != who && w->since[i] && !w->run_from[i])
				w->svc[i] += t - w->last_t;
	w->last_t = t;
}

/* Task @i's wait ended at @t */
static void waits_end(struct waits *w, int i, int64_t t)
{
	if (t - w->since[i] > w->max_len[i])
		w->max_len[i] = t - w->since[i];
	if (w->svc[i] > w->max_svc[i])
		w->max_svc[i] = w->svc[i];
	w->nwaits[i]++;
	w->since[i] = 0;
	w->run_from[i] = 0;
	w->svc[i] = 0;
}

static void waits_event(const struct swtrace_event *e, void *arg)
{
	struct waits *w = arg;
	int prev, next;

	if (e->cpu != w->cpu || e->t < w->ws || e->t > w->we)
		return;
	w->events++;
	prev = hog_index(w, e->prev);
	next = hog_index(w, e->next);
	if (!w->cur && prev >= 0)
		w->since[prev] = 0;	/* the first switch: prev ran since ws */
	w->cur = e->prev;
	waits_advance(w, e->t);
	if (prev >= 0 && w->since[prev] && !w->run_from[prev])
		w->run_from[prev] = e->t;	/* not seen switching in: cannot be */
	if (prev >= 0 && w->since[prev]) {
		/* It waited, then ran since run_from */
		if (e->prev_state == 'R' && e->t - w->run_from[prev] < HOG_GAP_NS)
			w->run_from[prev] = 0;	/* a sliver: still waiting */
		else
			waits_end(w, prev, w->run_from[prev]);
	}
	if (prev >= 0 && e->prev_state == 'R' && !w->since[prev])
		w->since[prev] = e->t;
	if (next >= 0 && w->since[next])
		w->run_from[next] = e->t;
	w->cur = e->next;
}

/* Service and length of the longest waits of the hogs in [ws, we]; events seen or -errno */
static long waits_measure(struct waits *w)
{
	long r;

	for (int i = 0; i < w->n; i++)
		w->since[i] = w->ws;	/* runnable since the window opened */
	w->last_t = w->ws;
	r = swtrace_for_each(waits_event, w);
	if (r < 0)
		return r;
	waits_advance(w, w->we);
	for (int i = 0; i < w->n; i++)
		if (w->since[i])
			waits_end(w, i, w->run_from[i] ? w->run_from[i] : w->we);
	return w->events;
}

static void run_mix(const struct mix *m, int cpu)
{
	struct hog_slot *s = shared_alloc(sizeof(*s) * m->n);
	struct ktap_sub sub = { 0 };
	int64_t sum = 0, window, ws, we;
	struct waits w;
	pid_t pid[MAXT];
	long nev, lost;
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
	/* Past the start-up transient (see above) */
	sleep_ns(2 * sum + 300 * NSEC_PER_MSEC);
	ws = now_ns() + 10 * NSEC_PER_MSEC;
	we = ws + window;
	for (int i = 0; i < m->n; i++) {
		s[i].win_end = we;
		s[i].win_start = ws;
	}
	sleep_until_ns(ws);
	r = swtrace_on(1);
	sleep_until_ns(we);
	swtrace_on(0);
	if (r) {
		ktap_fail(m->name, "cannot start the sched_switch trace: %s", strerror(-r));
		goto out;
	}
	sleep_until_ns(we + 50 * NSEC_PER_MSEC);
	w = (struct waits){ .n = m->n, .cpu = cpu, .pid = pid, .ws = ws, .we = we };
	nev = waits_measure(&w);
	lost = swtrace_overrun(cpu);
	swtrace_stop();
	swtrace_setup(TRACE_KB);
	ktap_diag("%s: rr_interval %d ms, sum E %.0f ms, window %.0f ms on CPU %d, %s bound",
		  m->name, m->rr, MS(sum), MS(window), cpu,
		  m->sleeper_bound ? "sleeper" : "CPU-bound");
	ktap_diag("  %ld sched_switch events in the window, %ld lost", nev, lost);
	if (nev <= 0 || lost != 0) {
		ktap_fail(m->name, "no complete sched_switch trace of the window (%ld events, %ld "
			  "lost)", nev, lost);
		goto out;
	}
	ktap_diag("  policy nice   E(ms)  bound(ms)  service(ms)  wait(ms)  waits  user-gap(ms)");
	for (int i = 0; i < m->n; i++) {
		int64_t bound = m->sleeper_bound ? rsdl_sleeper_bound_ns(m->t, m->n, i, m->rr)
						 : rsdl_wait_bound_ns(m->t, m->n, i, m->rr);
		int64_t gap = s[i].max_gap, first = s[i].first_in_win, last = s[i].last_in_win;

		if (!first) {
			gap = window;
		} else {
			if (first - ws > gap)
				gap = first - ws;
			if (we - last > gap)
				gap = we - last;
		}
		ktap_diag("  %-6s %4d %7.1f %10.1f %12.2f %9.2f %6ld %13.2f",
			  policy_name(m->t[i].policy), m->t[i].nice,
			  MS(rsdl_entitlement_ns(m->t[i].policy, m->t[i].nice, m->rr)), MS(bound),
			  MS(w.max_svc[i]), MS(w.max_len[i]), w.nwaits[i], MS(gap));
		ktap_expect(&sub, first != 0, "%s nice %d never ran in the window",
			    policy_name(m->t[i].policy), m->t[i].nice);
		ktap_expect(&sub, w.max_svc[i] <= bound,
			    "%s nice %d waited while the others ran %.2f ms, bound %.2f ms "
			    "(that wait: up to %.2f ms long)", policy_name(m->t[i].policy),
			    m->t[i].nice, MS(w.max_svc[i]), MS(bound), MS(w.max_len[i]));
	}
	ktap_sub_end(&sub, m->name);
out:
	for (int i = 0; i < m->n; i++)
		kill_child(pid[i]);
	munmap(s, sizeof(*s) * m->n);
}

int main(void)
{
	int cpu = test_cpu(), r;

	ktap_plan("rsdl_bounded_wait", 3);
	ktap_watchdog(120);
	ktap_diag("scheduler: %s, %d CPUs online, hogs on CPU %d", sched_name(), ncpus_online(),
		  cpu);
	if (!sched_is_rsdl())
		ktap_diag("RSDL is not enabled: the bounds below are RSDL's and are expected to fail");
	become_controller_or_bail();
	r = swtrace_setup(TRACE_KB);
	if (r)
		ktap_bail("no sched_switch trace: %s", strerror(-r));
	ktap_on_exit(swtrace_stop);
	for (unsigned int i = 0; i < sizeof(mixes) / sizeof(mixes[0]); i++)
		run_mix(&mixes[i], cpu);
	ktap_finish();
}
