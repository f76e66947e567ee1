// SPDX-License-Identifier: GPL-2.0
/*
 * idle_kick - an overloaded CPU wakes an idle CPU to pull only if one of its
 * waiting tasks may run there (suite.list: smp4).
 *
 * Expected: sched-rsdl.rst, "Interaction with the rest of the kernel", SMP,
 * periodic balance: "A CPU with waiting tasks also wakes an idle CPU ... but
 * only a CPU that one of those tasks may move to". Four nice-0 busy loops
 * with affinity {0, 1}, two per CPU: CPUs 0 and 1 are overloaded (tasks
 * wait, and may move between them), CPUs 2 and 3 are idle and no waiting
 * task may run there. An idle CPU is woken with a rescheduling IPI (the
 * guest idles with HLT), counted per CPU in /proc/interrupts ("RES").
 * Before this rule each overloaded CPU woke CPU 2 every RSDL_BALANCE_MS
 * (4 ms): 2 x 250 x 5 s = 2500 IPIs in the window, all for nothing.
 *
 *  1. no_useless_kick (RSDL): over WINDOW_S, the RES count of CPUs 2-3 with
 *     the loops running exceeds the count of an equal window without them
 *     (measured just before) by at most 1 % of those 2500 (25): other
 *     wakeups (kworkers, timers) happen in both windows.
 * On EEVDF (rsdl=off) the counts are printed ("measured" only): fair's idle
 * balancing kicks through its own path.
 */
#include "util.h"

#define WINDOW_S 5
#define NLOOPS 4
#define USELESS (2 * (1000 / 4) * WINDOW_S)	/* 2 CPUs x 250/s x window */
#define ALLOWED (USELESS / 100)

/* Rescheduling interrupts received by CPUs 2 and 3 so far, or -1 */
static long long res_idle_cpus(void)
{
	static char buf[1 << 16];
	char *line, *save;

	if (read_file("/proc/interrupts", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *end;
		long long v[4];

		while (*p == ' ')
			p++;
		if (strncmp(p, "RES:", 4))
			continue;
		p += 4;
		for (int c = 0; c < 4; c++) {
			v[c] = strtoll(p, &end, 10);
			if (end == p)
				return -1;
			p = end;
		}
		return v[2] + v[3];
	}
	return -1;
}

int main(void)
{
	struct hog_slot *hs = shared_alloc(sizeof(*hs) * NLOOPS);
	long long r0, r1, r2, r3, base, loaded;
	pid_t pid[NLOOPS];
	cpu_set_t two;

	ktap_plan("idle_kick", 1);
	ktap_watchdog(60);
	if (ncpus_online() != 4)
		ktap_bail("needs exactly 4 online CPUs, has %d", ncpus_online());
	become_controller_or_bail();
	CPU_ZERO(&two);
	CPU_SET(0, &two);
	CPU_SET(1, &two);

	r0 = res_idle_cpus();
	sleep_ms(WINDOW_S * 1000);
	r1 = res_idle_cpus();
	for (int i = 0; i < NLOOPS; i++) {
		struct task_cfg c = { .cpu = i % 2, .policy = SCHED_OTHER };

		pid[i] = spawn_hog(&c, &hs[i], HOG_COUNT, 3 * WINDOW_S * NSEC_PER_SEC);
		/* allowed on both busy CPUs: waiting loops may move between 0 and 1 only */
		if (sched_setaffinity(pid[i], sizeof(two), &two))
			ktap_bail("sched_setaffinity: %s", strerror(errno));
	}
	sleep_ms(500);
	r2 = res_idle_cpus();
	sleep_ms(WINDOW_S * 1000);
	r3 = res_idle_cpus();
	for (int i = 0; i < NLOOPS; i++)
		kill_child(pid[i]);
	if (r0 < 0 || r1 < 0 || r2 < 0 || r3 < 0)
		ktap_bail("no RES line for 4 CPUs in /proc/interrupts");
	base = r1 - r0;
	loaded = r3 - r2;
	ktap_diag("scheduler: %s; RES on CPUs 2-3 in %d s: quiet window (no loops) %lld, "
		  "loaded window (%d loops on CPUs 0-1) %lld; the every-4-ms kick would add %d",
		  sched_name(), WINDOW_S, base, NLOOPS, loaded, USELESS);
	ktap_diag("idle_kicks=%lld sched=%s", loaded, sched_name());
	if (!sched_is_rsdl()) {
		ktap_check(base >= 0 && loaded >= 0, "measured", "negative counts %lld, %lld", base, loaded);
		ktap_finish();
	}
	ktap_check(loaded <= base + ALLOWED, "no_useless_kick",
		   "%lld rescheduling IPIs to idle CPUs 2-3 with loops on 0-1, quiet window %lld, "
		   "allowed %lld + %d", loaded, base, base, ALLOWED);
	ktap_finish();
}
