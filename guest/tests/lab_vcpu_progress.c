// SPDX-License-Identifier: GPL-2.0
/*
 * lab_vcpu_progress - a task that the kernel says ran for T ms really
 * executed for about T ms.
 *
 * Expected: no scheduler rule; this checks the platform the timing tests
 * stand on. A failure means a virtual CPU stopped executing while guest time
 * went on, so every share, latency and accounting test of that boot fails
 * for reasons that have nothing to do with the kernel ("Known lab problem"
 * in guest/tests/README.md).
 *
 * Not in suite.list (it takes ~5 s a round); run it by hand in a guest:
 * `lab_vcpu_progress [ROUNDS]` (default 40). Each round starts one hog
 * pinned to every online CPU plus ncpus + 1 unpinned hogs (configured while
 * they wait on a gate), lets them run 500 ms, and checks every hog made
 * progress: a hog charged >= 100 ms of runtime with zero loop passes was
 * charged CPU time it never executed.
 */
#include "util.h"

#define RUN_NS (500 * NSEC_PER_MSEC)

/* local timer interrupts per CPU (/proc/interrupts "LOC:") */
static void loc_counts(long long *cnt, int n)
{
	static char buf[65536];
	char *p;

	if (read_file("/proc/interrupts", buf, sizeof(buf)) < 0 || !(p = strstr(buf, "LOC:")))
		return;
	p += 4;
	for (int c = 0; c < n; c++)
		cnt[c] = strtoll(p, &p, 10);
}

/* __schedule() calls per CPU (/proc/schedstat "cpuN yld 0 sched_count ...") */
static void sched_counts(long long *cnt, int n)
{
	static char buf[16384];
	char *line, *save;

	if (read_file("/proc/schedstat", buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int c;
		long long y, z, sc;

		if (sscanf(line, "cpu%d %lld %lld %lld", &c, &y, &z, &sc) == 4 && c >= 0 && c < n)
			cnt[c] = sc;
	}
}

int main(int argc, char **argv)
{
	int n = ncpus_online(), rounds = argc > 1 ? atoi(argv[1]) : 40, stuck = 0, total = 0;

	ktap_plan("lab_vcpu_progress", 1);
	ktap_diag("scheduler: %s, %d CPUs online, %d rounds", sched_name(), n, rounds);
	if (n > 16)
		ktap_bail("more than 16 CPUs");
	for (int r = 0; r < rounds; r++) {
		int nh = 2 * n + 1;
		struct hog_slot *s = shared_alloc(sizeof(*s) * nh);
		pid_t pid[40];

		for (int i = 0; i < nh; i++) {
			struct task_cfg cfg = { .cpu = i < n ? i : -1, .policy = SCHED_OTHER };

			pid[i] = spawn_hog(&cfg, &s[i], HOG_COUNT, 10 * NSEC_PER_SEC);
		}
		long long sc0[16] = { 0 }, sc1[16] = { 0 }, lc0[16] = { 0 }, lc1[16] = { 0 };

		if (hogs_wait_ready(s, nh, 5 * NSEC_PER_SEC))
			ktap_bail("hogs did not start");
		sched_counts(sc0, n);
		loc_counts(lc0, n);
		sleep_ns(RUN_NS);
		sched_counts(sc1, n);
		loc_counts(lc1, n);
		for (int i = 0; i < nh; i++) {
			long long run = 0;
			char path[64], buf[2048], *p;
			unsigned long st = 0;

			total++;
			schedstat_read(pid[i], &run, NULL, NULL);
			if (s[i].iters || run < 100 * NSEC_PER_MSEC)
				continue;
			stuck++;
			snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid[i]);
			if (read_file(path, buf, sizeof(buf)) > 0 && (p = strrchr(buf, ')')))
				sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %lu", &st);
			snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid[i]);
			if (read_file(path, buf, sizeof(buf)) < 0)
				buf[0] = '\0';
			for (p = buf; *p; p++)
				if (*p == '\n')
					*p = '|';
			ktap_diag("round %d hog %d (%s): charged %.1f ms (system time %lu ticks), 0 loop "
				  "passes; stack %.200s", r, i, i < n ? "pinned" : "unpinned", MS(run), st,
				  buf);
			for (int c = 0; c < n; c++)
				ktap_diag("  CPU %d: %lld schedule() calls, %lld local timer interrupts "
					  "(a busy CPU takes >= 1 per ms at HZ=1000) in the %.0f ms "
					  "window", c, sc1[c] - sc0[c], lc1[c] - lc0[c], MS(RUN_NS));
		}
		for (int i = 0; i < nh; i++)
			kill_child(pid[i]);
		munmap(s, sizeof(*s) * nh);
	}
	ktap_diag("%d of %d hogs charged >= 100 ms without executing a loop pass", stuck, total);
	ktap_check(!stuck, "runtime_is_execution",
		   "%d hogs were charged CPU time they did not execute (emulator vCPU stalls?)",
		   stuck);
	ktap_finish();
}
