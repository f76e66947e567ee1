// SPDX-License-Identifier: GPL-2.0
/*
 * rr_get_interval - sched_rr_get_interval() for every policy.
 *
 * Expected: sched-rsdl.rst, Interfaces (sched_rr_get_interval() returns a
 * normal task's quota), the quota formula (quota = rr for nice >= 0,
 * max(rr, rr * nice^2 / 40) below 0) and rule 13 (a new rr_interval reaches
 * tasks from their next rotation); RT policies as the core defines them. A
 * failure means the syscall reports something other than the quota the
 * scheduler uses, or mishandles bad arguments.
 *
 *  1. rr_policy: SCHED_RR returns success and a positive interval equal to
 *     /proc/sys/kernel/sched_rr_timeslice_ms (+- one jiffy).
 *  2. fifo_policy_zero: SCHED_FIFO returns success and 0 (no timeslice).
 *  3. normal_policy: for nice 0, -7, -10, -20, 19.
 *     RSDL: the interval is the task's quota, rounded to jiffies (HZ=1000 =>
 *     ms): |interval - quota(nice, rr_interval)| < 1 ms.
 *     EEVDF: only success (the value is the slice and may round to 0).
 *  4. new_rr_interval_applies (RSDL): after rr_interval := 10, a task forked
 *     afterwards reports quota(nice, 10) for the same nices.
 *     EEVDF: there is no rr_interval; sched_rr_get_interval() of SCHED_BATCH
 *     and SCHED_IDLE tasks succeeds instead.
 *  5. invalid_args: pid -1 -> EINVAL, an unused pid -> ESRCH, a bad user
 *     pointer -> EFAULT.
 */
#include "util.h"

static const int nices[] = { 0, -7, -10, -20, 19 };
#define NNICES (int)(sizeof(nices) / sizeof(nices[0]))

/* Interval (ns) seen by a fresh child with @policy/@val, or -errno. */
static int64_t child_interval(int policy, int val)
{
	volatile int64_t *out = shared_alloc(sizeof(int64_t));
	pid_t p = fork_child();
	int64_t r;

	if (p == 0) {
		struct timespec ts;

		if (set_policy(0, policy, val, 0)) {
			*out = -errno;
			_exit(1);
		}
		*out = sched_rr_get_interval(0, &ts) ? -errno : ts_ns(&ts);
		_exit(0);
	}
	reap_child(p);
	r = *out;
	munmap((void *)out, sizeof(int64_t));
	return r;
}

static void check_rsdl_nices(struct ktap_sub *s, int rr)
{
	for (int i = 0; i < NNICES; i++) {
		int64_t got = child_interval(SCHED_OTHER, nices[i]);
		int64_t want = rsdl_quota_ns(nices[i], rr);

		ktap_diag("rr_interval %d, nice %3d: interval %.3f ms, quota %.3f ms", rr, nices[i],
			  MS(got), MS(want));
		ktap_expect(s, got >= 0 && llabs(got - want) < RSDL_TICK_NS,
			    "nice %d at rr_interval %d: %lld ns, quota %lld ns", nices[i], rr,
			    (long long)got, (long long)want);
	}
}

int main(void)
{
	int rsdl = sched_is_rsdl();
	struct ktap_sub s = { 0 };
	long long slice_ms;
	int64_t got;

	ktap_plan("rr_get_interval", 5);
	ktap_watchdog(60);
	ktap_diag("scheduler: %s", sched_name());

	got = child_interval(SCHED_RR, 10);
	if (read_ll("/proc/sys/kernel/sched_rr_timeslice_ms", &slice_ms)) {
		ktap_diag("sched_rr_timeslice_ms unreadable: checking only > 0");
		slice_ms = -1;
	}
	ktap_diag("SCHED_RR interval %.3f ms, sched_rr_timeslice_ms %lld", MS(got), slice_ms);
	ktap_check(got > 0 && (slice_ms < 0 || llabs(got - slice_ms * NSEC_PER_MSEC) <= RSDL_TICK_NS),
		   "rr_policy", "interval %lld ns, sched_rr_timeslice_ms %lld", (long long)got,
		   slice_ms);

	got = child_interval(SCHED_FIFO, 10);
	ktap_check(got == 0, "fifo_policy_zero", "SCHED_FIFO interval %lld ns (or -errno)",
		   (long long)got);

	if (rsdl) {
		int rr = rr_interval_get();

		ktap_expect(&s, rr > 0, "rr_interval unreadable");
		if (rr > 0)
			check_rsdl_nices(&s, rr);
	} else {
		for (int i = 0; i < NNICES; i++) {
			got = child_interval(SCHED_OTHER, nices[i]);
			ktap_diag("EEVDF nice %3d: interval %.3f ms", nices[i], MS(got));
			ktap_expect(&s, got >= 0, "nice %d: error %lld", nices[i], (long long)got);
		}
	}
	ktap_sub_end(&s, "normal_policy");

	memset(&s, 0, sizeof(s));
	if (rsdl) {
		int r = rr_interval_set(10);

		ktap_expect(&s, r == 0, "cannot set rr_interval to 10: %s", strerror(-r));
		if (!r)
			check_rsdl_nices(&s, 10);
		rr_interval_restore();
		ktap_sub_end(&s, "new_rr_interval_applies");
	} else {
		got = child_interval(SCHED_BATCH, 0);
		ktap_expect(&s, got >= 0, "SCHED_BATCH: %lld", (long long)got);
		ktap_diag("EEVDF SCHED_BATCH interval %.3f ms", MS(got));
		got = child_interval(SCHED_IDLE, 0);
		ktap_expect(&s, got >= 0, "SCHED_IDLE: %lld", (long long)got);
		ktap_diag("EEVDF SCHED_IDLE interval %.3f ms", MS(got));
		ktap_sub_end(&s, "batch_idle_policies");
	}

	memset(&s, 0, sizeof(s));
	{
		struct timespec ts;
		pid_t gone = fork();
		int r;

		if (gone == 0)
			_exit(0);
		waitpid(gone, NULL, 0);
		r = sched_rr_get_interval(-1, &ts) ? errno : 0;
		ktap_expect(&s, r == EINVAL, "pid -1: errno %d, want EINVAL", r);
		r = sched_rr_get_interval(gone, &ts) ? errno : 0;
		ktap_expect(&s, r == ESRCH, "unused pid: errno %d, want ESRCH", r);
		r = syscall(SYS_sched_rr_get_interval, 0, (void *)8) ? errno : 0;
		ktap_expect(&s, r == EFAULT, "bad pointer: errno %d, want EFAULT", r);
	}
	ktap_sub_end(&s, "invalid_args");
	ktap_finish();
}
