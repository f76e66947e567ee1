// SPDX-License-Identifier: GPL-2.0
/*
 * schedstats - the wait and sleep statistics of /proc/<pid>/sched count the
 * scheduler's tasks (the lab boots with schedstats=enable).
 *
 * Expected: sched-rsdl.rst, Interfaces: with schedstats on, the wait_*,
 * sleep_* and block_* fields count RSDL tasks as they count fair ones (a task
 * waits while queued and not running, on either array). The figures follow
 * from the fields' definitions; nothing is taken from an earlier run. A
 * failure means the scheduler does not feed these statistics (they stay at
 * zero) or feeds them wrongly.
 *
 *  1. wait_counted: two hogs pinned to one CPU for 1 s. A hog that never
 *     sleeps is either running or queued, so over its window:
 *       - wait_count grows (it was switched out and picked again),
 *       - wait_sum + se.sum_exec_runtime = the window, 95..105 %,
 *       - wait_sum = run_delay of /proc/<pid>/schedstat (sched_info counts
 *         the same queued-not-running time in core code), within 2 % of the
 *         window + 1 ms,
 *       - wait_max <= the window.
 *  2. sleep_counted: a task pinned to that CPU sleeps 20 times for 10 ms
 *     (nanosleep, TASK_INTERRUPTIBLE). A task is running, queued or asleep,
 *     so between the two reads of /proc/self/sched sum_sleep_runtime must
 *     grow by the elapsed time minus the growth of its runtime and wait_sum.
 *     The snapshots are taken somewhere inside the reads and a running
 *     task's runtime may lag by up to a tick in each, so the tolerance is
 *     the time the two reads took + 2 ms (HZ=1000). It must also grow by no
 *     more than the elapsed time nor less than 90 % of the 200 ms asked for
 *     (a sleep is counted from the dequeue, which comes a few microseconds
 *     after the nanosleep call, so it may be a little shorter than asked);
 *     sleep_max >= 9 ms and nr_wakeups grows by >= 20.
 */
#include "util.h"

static int cpu;

struct ss {
	long long wait_sum, wait_count, wait_max, exec, run_delay;
	long long sleep_sum, sleep_max, wakeups;
};

struct hog_report {
	volatile int64_t wall, reads;
	volatile int done, bad;
	struct ss d, end;
};

static int ss_read(pid_t pid, struct ss *s)
{
	static struct sched_snap snap;
	int r = 0;

	if (sched_snap_read(pid, &snap))
		return -1;
	r |= sched_snap_get(&snap, "wait_sum", &s->wait_sum);
	r |= sched_snap_get(&snap, "wait_count", &s->wait_count);
	r |= sched_snap_get(&snap, "wait_max", &s->wait_max);
	r |= sched_snap_get(&snap, "se.sum_exec_runtime", &s->exec);
	r |= sched_snap_get(&snap, "sum_sleep_runtime", &s->sleep_sum);
	r |= sched_snap_get(&snap, "sleep_max", &s->sleep_max);
	r |= sched_snap_get(&snap, "nr_wakeups", &s->wakeups);
	r |= schedstat_read(pid, NULL, &s->run_delay, NULL);
	return r ? -1 : 0;
}

static void ss_delta(const struct ss *a, const struct ss *b, struct ss *d)
{
	d->wait_sum = b->wait_sum - a->wait_sum;
	d->wait_count = b->wait_count - a->wait_count;
	d->wait_max = b->wait_max;
	d->exec = b->exec - a->exec;
	d->run_delay = b->run_delay - a->run_delay;
	d->sleep_sum = b->sleep_sum - a->sleep_sum;
	d->sleep_max = b->sleep_max;
	d->wakeups = b->wakeups - a->wakeups;
}

static void hog_body(struct hog_report *h, int *gate)
{
	struct ss s0, s1;
	int64_t w0;

	if (pin_self(cpu))
		_exit(1);
	while (!__atomic_load_n(gate, __ATOMIC_ACQUIRE))
		;
	h->bad = ss_read(getpid(), &s0);
	w0 = now_ns();
	while (now_ns() - w0 < NSEC_PER_SEC)
		;
	h->bad |= ss_read(getpid(), &s1);
	h->wall = now_ns() - w0;
	ss_delta(&s0, &s1, &h->d);
	h->done = 1;
	_exit(0);
}

static void test_wait(void)
{
	struct hog_report *h = shared_alloc(sizeof(*h) * 2);
	int *gate = shared_alloc(sizeof(*gate));
	struct ktap_sub s = { 0 };
	pid_t p[2];

	for (int i = 0; i < 2; i++) {
		p[i] = fork_child();
		if (p[i] == 0)
			hog_body(&h[i], gate);
	}
	sleep_ms(50);
	__atomic_store_n(gate, 1, __ATOMIC_RELEASE);
	reap_child(p[0]);
	reap_child(p[1]);

	for (int i = 0; i < 2; i++) {
		const struct ss *d = &h[i].d;
		double sum = d->wait_sum + d->exec;

		ktap_diag("hog %d on CPU %d, window %.1f ms: wait_sum %.1f ms, run %.1f ms, "
			  "sum %.1f%% (expected 95..105%%); run_delay %.1f ms (expected wait_sum "
			  "+- %.1f ms); wait_count +%lld (expected > 0); wait_max %.1f ms "
			  "(expected <= window)", i, cpu, MS(h[i].wall), MS(d->wait_sum),
			  MS(d->exec), 100.0 * sum / h[i].wall, MS(d->run_delay),
			  MS(0.02 * h[i].wall + NSEC_PER_MSEC), d->wait_count, MS(d->wait_max));
		ktap_expect(&s, h[i].done && !h[i].bad, "hog %d could not read its statistics", i);
		ktap_expect(&s, d->wait_count > 0, "hog %d: wait_count did not grow", i);
		ktap_expect(&s, sum >= 0.95 * h[i].wall && sum <= 1.05 * h[i].wall,
			    "hog %d: wait_sum + runtime %.1f%% of the window", i,
			    100.0 * sum / h[i].wall);
		ktap_expect(&s, llabs(d->wait_sum - d->run_delay) <= 0.02 * h[i].wall + NSEC_PER_MSEC,
			    "hog %d: wait_sum %.1f ms vs run_delay %.1f ms", i, MS(d->wait_sum),
			    MS(d->run_delay));
		ktap_expect(&s, d->wait_max <= h[i].wall, "hog %d: wait_max %.1f ms", i,
			    MS(d->wait_max));
	}
	ktap_sub_end(&s, "wait_counted");
}

static void test_sleep(void)
{
	struct hog_report *h = shared_alloc(sizeof(*h));
	const int n = 20;
	const int64_t nap = 10 * NSEC_PER_MSEC;
	struct ktap_sub s = { 0 };
	long long rest, tol;
	pid_t p = fork_child();

	if (p == 0) {
		struct ss s0, s1;
		int64_t t0, t1, t2;

		if (pin_self(cpu))
			_exit(1);
		t0 = now_ns();
		h->bad = ss_read(getpid(), &s0);
		t1 = now_ns();
		for (int i = 0; i < n; i++)
			sleep_ns(nap);
		t2 = now_ns();
		h->bad |= ss_read(getpid(), &s1);
		h->wall = now_ns() - t0;
		/* the two snapshots were taken somewhere inside the two reads */
		h->reads = (t1 - t0) + (now_ns() - t2);
		ss_delta(&s0, &s1, &h->d);
		h->done = 1;
		_exit(0);
	}
	reap_child(p);
	rest = h->wall - h->d.exec - h->d.wait_sum;
	tol = h->reads + 2 * NSEC_PER_MSEC;
	ktap_diag("sleeper on CPU %d: %d naps of %.0f ms in %.1f ms (with the reads), of which run "
		  "%.2f ms and wait %.2f ms: sum_sleep_runtime +%.2f ms (expected %.2f +- %.2f, and %.0f..%.1f), "
		  "sleep_max %.1f ms (expected >= %.0f), nr_wakeups +%lld (expected >= %d)", cpu, n,
		  MS(nap), MS(h->wall), MS(h->d.exec), MS(h->d.wait_sum), MS(h->d.sleep_sum),
		  MS(rest), MS(tol), MS(0.9 * n * nap), MS(h->wall), MS(h->d.sleep_max),
		  MS(0.9 * nap), h->d.wakeups, n);
	ktap_expect(&s, h->done && !h->bad, "sleeper could not read its statistics");
	ktap_expect(&s, llabs(h->d.sleep_sum - rest) <= tol,
		    "sum_sleep_runtime +%.2f ms, elapsed - run - wait = %.2f ms",
		    MS(h->d.sleep_sum), MS(rest));
	ktap_expect(&s, h->d.sleep_sum >= 0.9 * n * nap && h->d.sleep_sum <= h->wall,
		    "sum_sleep_runtime +%.1f ms", MS(h->d.sleep_sum));
	ktap_expect(&s, h->d.sleep_max >= 0.9 * nap, "sleep_max %.1f ms",
		    MS(h->d.sleep_max));
	ktap_expect(&s, h->d.wakeups >= n, "nr_wakeups +%lld", h->d.wakeups);
	ktap_sub_end(&s, "sleep_counted");
}

int main(void)
{
	ktap_plan("schedstats", 2);
	cpu = test_cpu();
	ktap_diag("scheduler: %s, %d CPUs online, tasks on CPU %d", sched_name(),
		  ncpus_online(), cpu);
	become_controller_or_bail();
	test_wait();
	test_sleep();
	ktap_finish();
}
