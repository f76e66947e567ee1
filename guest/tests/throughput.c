// SPDX-License-Identifier: GPL-2.0
/*
 * throughput - throughput guard, printed not asserted (SMP balancing;
 * suite.list: smp4, so it runs on the rsdl-smp4 and eevdf-smp4 boots).
 *
 * Expected: no sched-rsdl.rst figure; the RSDL boot's times are compared with
 * the EEVDF boot's by the host. A failure means a benchmark run failed or
 * printed no time.
 *
 * Runs `hackbench -g 4 -l 50` (4 groups of 20 senders and 20 receivers,
 * processes, sockets) and `perf bench sched messaging -g 4 -l 50` (the same
 * pattern in perf) RUNS times each, alternating, and prints every run's time
 * and the medians on a greppable line, with the context switches each run
 * made (the "ctxt" count of /proc/stat, all CPUs, medians): a scheduler that
 * preempts on every message switches more often for the same work:
 *   # throughput: hackbench_s=MEDIAN messaging_s=MEDIAN hackbench_ctxt=MEDIAN
 *     messaging_ctxt=MEDIAN sched=RSDL cpus=4
 * The host divides the RSDL boot's medians by the EEVDF boot's (make check
 * prints the ratio when both boots ran). Lower is better. Under multi-threaded
 * TCG on a shared host these numbers carry the host's load: compare boots that
 * ran back to back, and prefer `make demo` (icount) for a reproducible figure.
 *
 *  1. hackbench_runs: every hackbench run exits 0 and prints its time.
 *  2. messaging_runs: every perf bench run exits 0 and prints its total time.
 */
#include "util.h"

#define RUNS 3

/* Run @cmd through sh, return its time (s) from the first line starting with @key, or -1. */
static double run_timed(const char *cmd, const char *key, int *status)
{
	char line[512];
	double t = -1;
	FILE *f = popen(cmd, "r");

	*status = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		while (*p == ' ' || *p == '\t')
			p++;
		if (t < 0 && !strncmp(p, key, strlen(key)))
			t = strtod(p + strlen(key), NULL);
	}
	*status = pclose(f);
	return t;
}

/* The context switches of all CPUs since boot (/proc/stat "ctxt"), or -1 */
static double ctxt_now(void)
{
	static char buf[1 << 14];
	char *p;

	if (read_file("/proc/stat", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nctxt ");
	return p ? strtod(p + 6, NULL) : -1;
}

/* run_timed(), and the context switches it took in @ctxt */
static double run_counted(const char *cmd, const char *key, int *status, double *ctxt)
{
	double c0 = ctxt_now(), t = run_timed(cmd, key, status);

	*ctxt = ctxt_now() - c0;
	return t;
}

static double median3(double *v, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (v[j] < v[i]) {
				double x = v[i];

				v[i] = v[j];
				v[j] = x;
			}
	return v[n / 2];
}

int main(void)
{
	static const char hb[] = "hackbench -g 4 -l 50 2>&1";
	static const char pb[] = "perf bench sched messaging -g 4 -l 50 2>&1";
	double th[RUNS], tp[RUNS], ch[RUNS], cp[RUNS], mh, mp;
	struct ktap_sub s1 = { 0 }, s2 = { 0 };

	ktap_plan("throughput", 2);
	ktap_watchdog(280);
	ktap_diag("scheduler: %s, %d CPUs online; '%s' and '%s', %d runs each", sched_name(),
		  ncpus_online(), hb, pb, RUNS);
	for (int r = 0; r < RUNS; r++) {
		int st;

		th[r] = run_counted(hb, "Time:", &st, &ch[r]);
		ktap_diag("run %d: hackbench %.3f s, %.0f context switches (status %d)", r + 1,
			  th[r], ch[r], st);
		ktap_expect(&s1, st == 0 && th[r] > 0, "hackbench run %d: status %d, time %.3f", r + 1,
			    st, th[r]);
		tp[r] = run_counted(pb, "Total time:", &st, &cp[r]);
		ktap_diag("run %d: perf bench sched messaging %.3f s, %.0f context switches (status %d)",
			  r + 1, tp[r], cp[r], st);
		ktap_expect(&s2, st == 0 && tp[r] > 0, "perf bench run %d: status %d, time %.3f",
			    r + 1, st, tp[r]);
	}
	mh = median3(th, RUNS);
	mp = median3(tp, RUNS);
	ktap_diag("throughput: hackbench_s=%.3f messaging_s=%.3f hackbench_ctxt=%.0f messaging_ctxt=%.0f sched=%s cpus=%d",
		  mh, mp, median3(ch, RUNS), median3(cp, RUNS), sched_name(), ncpus_online());
	ktap_sub_end(&s1, "hackbench_runs");
	ktap_sub_end(&s2, "messaging_runs");
	ktap_finish();
}
