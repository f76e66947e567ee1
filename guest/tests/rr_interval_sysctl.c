// SPDX-License-Identifier: GPL-2.0
/*
 * rr_interval_sysctl - /proc/sys/kernel/rr_interval accepts 1..1000 ms and
 * nothing else, and a new value reaches every task from its next rotation.
 *
 * Expected: sched-rsdl.rst, Interfaces (1..1000, EINVAL otherwise, the old
 * value kept), rule 13 (a task takes its quota from the current rr_interval
 * whenever it starts a rotation) and rule 5 (a CPU that goes idle ends its
 * rotation); quota() from guest/lib/rsdl_spec.h. A failure means a bad value
 * was taken, a good one refused, or a task kept an old quota past its next
 * rotation.
 *
 *  1. invalid_writes_einval: write(2) of "0", "1001", "-5", "abc", " ",
 *     "\n" (what `echo "" >` writes), "6abc" and a 20-digit number each fail
 *     with EINVAL and leave the value unchanged. A zero-length write(2) may
 *     return 0 (proc_dointvec ignores it) or EINVAL, but must not change the
 *     value either.
 *  2. valid_writes_accepted: "1", "1000" and "7\n" are accepted and read back.
 *  3. new_value_reaches_every_task: with rr_interval 10, a task forked
 *     afterwards has rsdl.quota = quota(0, 10) = 10 000 000 ns and, after
 *     nice -10, quota(-10, 10) = 25 000 000 ns; a nice -10 child created
 *     before the write, asleep meanwhile, has quota(-10, old) until it wakes
 *     and quota(-10, 10) after a wake that follows 50 ms of sleep of this
 *     process (its CPU went idle, which ends the rotation); this process,
 *     woken from that sleep, has quota(0, 10).
 *  4. restored: the old value is written back and read back.
 */
#include <sys/resource.h>
#include "util.h"

static int write_raw(const char *data, size_t len)
{
	ssize_t r = write_file_n(RR_INTERVAL_PATH, data, len);

	return r < 0 ? (int)r : 0;
}

/* rsdl.quota of @pid, or -1. */
static long long quota_of(pid_t pid)
{
	long long q;

	return sched_field(pid, "rsdl.quota", &q) ? -1 : q;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* A child that sets @nice (if != 0) and sleeps, waking on SIGUSR1; its pid. */
static pid_t sleeper(int nice)
{
	pid_t p = fork_child();

	if (p == 0) {
		signal(SIGUSR1, on_usr1);
		if (nice)
			setpriority(PRIO_PROCESS, 0, nice);
		for (;;)
			pause();
	}
	sleep_ms(20);
	return p;
}

int main(void)
{
	static const struct { const char *s; size_t len; const char *show; } bad[] = {
		{ "0", 1, "0" }, { "1001", 4, "1001" }, { "-5", 2, "-5" }, { "abc", 3, "abc" },
		{ " ", 1, "' '" }, { "\n", 1, "'\\n'" }, { "6abc", 4, "6abc" },
		{ "99999999999999999999", 20, "99999999999999999999" },
	};
	struct ktap_sub s = { 0 };
	int v0 = rr_interval_get(), r, v;

	ktap_plan("rr_interval_sysctl", 4);
	ktap_watchdog(30);
	ktap_diag("scheduler: %s, rr_interval %d", sched_name(), v0);
	if (v0 < 0)
		ktap_bail("%s is missing", RR_INTERVAL_PATH);
	rr_saved_ms = v0;
	ktap_on_exit(rr_interval_restore);

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = write_raw(bad[i].s, bad[i].len);
		v = rr_interval_get();
		ktap_expect(&s, r == -EINVAL, "write %s: %s, want EINVAL", bad[i].show,
			    r ? strerror(-r) : "accepted");
		ktap_expect(&s, v == v0, "write %s changed the value to %d", bad[i].show, v);
	}
	r = write_raw("", 0);
	v = rr_interval_get();
	ktap_diag("zero-length write: %s, value %d", r ? strerror(-r) : "returned 0", v);
	ktap_expect(&s, (r == 0 || r == -EINVAL) && v == v0, "zero-length write: %d, value %d", r,
		    v);
	ktap_sub_end(&s, "invalid_writes_einval");

	memset(&s, 0, sizeof(s));
	r = write_raw("1", 1);
	ktap_expect(&s, r == 0 && rr_interval_get() == 1, "write 1: %d, reads %d", r,
		    rr_interval_get());
	r = write_raw("1000", 4);
	ktap_expect(&s, r == 0 && rr_interval_get() == 1000, "write 1000: %d, reads %d", r,
		    rr_interval_get());
	r = write_raw("7\n", 2);
	ktap_expect(&s, r == 0 && rr_interval_get() == 7, "write '7\\n': %d, reads %d", r,
		    rr_interval_get());
	write_raw("6", 1);
	ktap_sub_end(&s, "valid_writes_accepted");

	memset(&s, 0, sizeof(s));
	{
		long long self_q0, old_child_q0, self_q1, old_child_q1, asleep_q;
		long long new_q, new_q_nice;
		pid_t old_child, new_child;
		char buf[16];

		/*
		 * Subtest 2 left rr_interval at 1000 for a moment: a rotation
		 * that started then gave this task quota(0, 1000). Sleep so
		 * that its CPU goes idle and a rotation starts under v0 (rule 5).
		 */
		snprintf(buf, sizeof(buf), "%d", v0);
		write_raw(buf, strlen(buf));
		sleep_ms(50);
		self_q0 = quota_of(getpid());
		old_child = sleeper(-10);
		old_child_q0 = quota_of(old_child);
		ktap_expect(&s, self_q0 == rsdl_quota_ns(0, v0),
			    "own quota %lld before the change, want quota(0, %d) = %lld", self_q0, v0,
			    (long long)rsdl_quota_ns(0, v0));
		ktap_expect(&s, old_child_q0 == rsdl_quota_ns(-10, v0),
			    "nice -10 child quota %lld, want quota(-10, %d) = %lld", old_child_q0, v0,
			    (long long)rsdl_quota_ns(-10, v0));
		r = write_raw("10", 2);
		ktap_expect(&s, r == 0, "write 10: %s", strerror(-r));
		asleep_q = quota_of(old_child);
		new_child = sleeper(0);
		new_q = quota_of(new_child);
		setpriority(PRIO_PROCESS, new_child, -10);
		new_q_nice = quota_of(new_child);
		sleep_ms(50);
		kill(old_child, SIGUSR1);
		sleep_ms(20);
		self_q1 = quota_of(getpid());
		old_child_q1 = quota_of(old_child);
		ktap_diag("rr_interval %d -> 10: new task quota %lld (want %lld), after nice -10 "
			  "%lld (want %lld); existing: self %lld -> %lld (want %lld), nice -10 child "
			  "%lld -> %lld asleep (want %lld) -> %lld woken (want %lld)",
			  v0, new_q, (long long)rsdl_quota_ns(0, 10), new_q_nice,
			  (long long)rsdl_quota_ns(-10, 10), self_q0, self_q1,
			  (long long)rsdl_quota_ns(0, 10), old_child_q0, asleep_q, old_child_q0,
			  old_child_q1, (long long)rsdl_quota_ns(-10, 10));
		ktap_expect(&s, new_q == rsdl_quota_ns(0, 10), "new task quota %lld", new_q);
		ktap_expect(&s, new_q_nice == rsdl_quota_ns(-10, 10), "new task at nice -10: %lld",
			    new_q_nice);
		ktap_expect(&s, asleep_q == old_child_q0,
			    "sleeping nice -10 task's quota changed before it woke: %lld -> %lld",
			    old_child_q0, asleep_q);
		ktap_expect(&s, self_q1 == rsdl_quota_ns(0, 10),
			    "this task after a sleep: quota %lld, want %lld", self_q1,
			    (long long)rsdl_quota_ns(0, 10));
		ktap_expect(&s, old_child_q1 == rsdl_quota_ns(-10, 10),
			    "nice -10 task after its wake: quota %lld, want %lld", old_child_q1,
			    (long long)rsdl_quota_ns(-10, 10));
		kill_child(old_child);
		kill_child(new_child);
	}
	ktap_sub_end(&s, "new_value_reaches_every_task");

	{
		char buf[16];

		snprintf(buf, sizeof(buf), "%d", v0);
		r = write_raw(buf, strlen(buf));
		ktap_check(r == 0 && rr_interval_get() == v0, "restored",
			   "writing back %d: %d, reads %d", v0, r, rr_interval_get());
	}
	ktap_finish();
}
