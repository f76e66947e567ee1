// SPDX-License-Identifier: GPL-2.0
/*
 * rsdl_rotations - the debugfs view /sys/kernel/debug/sched/rsdl under a hog
 * workload: two nice 0 hogs and one nice 5 hog pinned to one CPU at
 * rr_interval 2 ms.
 *
 * Expected: sched-rsdl.rst, Interfaces (the debugfs file's records), rules
 * 4 and 5 (minor and major rotations; a rotation serves the entitlements,
 * sum E) and the guarantee "Levels are served at most their quota plus one
 * charge interval". A failure means the file's format or counts are wrong,
 * rotations do not turn at the rate the entitlements give, or a level was
 * served beyond its quota plus one charge.
 *
 *  1. debugfs_format: every line parses: the header "rr_interval_ms=N
 *     enabled=1" with N equal to the sysctl; one per-CPU record per online
 *     CPU with integer rotation, prio_level (0..39), nr_running,
 *     minor_rotations, major_rotations, max_level_overrun_ns, max_charge_ns;
 *     per-level records with cpu, array (active|expired), level (0..39),
 *     queued >= 0, quota_ns, closed (0|1) (a level is listed when it has
 *     queued tasks, a non-zero quota or is closed, so queued=0 is legal).
 *     Consistency: for each CPU the sum of queued over both arrays equals that
 *     CPU's nr_running (one CPU's lines are printed under its runqueue lock),
 *     in both snapshots. The hog CPU shows nr_running >= 3 and at least one
 *     per-level record. Any other line is an error.
 *  2. rotations_advance: over a 1.1 s window the hog CPU's major_rotations
 *     grows by window / sum E = 1100 / (40 + 40 + 30) = 10 rotations +-30 %
 *     (each rotation serves exactly the hogs' entitlements, overruns being
 *     carried; the margin covers a partial rotation at each end and the
 *     little time other tasks take), rotation grows by the same amount (+-1),
 *     and minor_rotations grows at least as much as major_rotations (every
 *     level the hogs used closes before the array empties).
 *  3. overrun_within_charge: on every CPU max_level_overrun_ns <=
 *     max_charge_ns, and the hog CPU has max_charge_ns > 0.
 */
#include "util.h"

#define RR_MS 2
#define MAXCPU 64

struct snapshot {
	int ncpu_lines, nlevel_lines, hog_levels, errors;
	struct rsdl_cpu_stat cpu[MAXCPU];
	int seen[MAXCPU];
	long long queued[MAXCPU];	/* sum of queued over both arrays */
	long long rr;
};

static void parse_error(struct snapshot *sn, const char *why, const char *line)
{
	if (sn->errors++ < 5)
		ktap_diag("parse error (%s): %.150s", why, line);
}

static int take(struct snapshot *sn, int hog_cpu, int verbose)
{
	static char buf[1 << 16];
	char *line, *save;
	int lineno = 0;

	memset(sn, 0, sizeof(*sn));
	if (read_file(RSDL_DEBUGFS_PATH, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long c, en, v;
		char arr[16];

		if (verbose && lineno < 40)
			ktap_diag("| %.300s", line);
		if (lineno++ == 0) {
			if (kv_get(line, "rr_interval_ms", &sn->rr, NULL, 0) ||
			    kv_get(line, "enabled", &en, NULL, 0) || en != 1)
				parse_error(sn, "header", line);
			continue;
		}
		if (kv_get(line, "cpu", &c, NULL, 0) || c < 0 || c >= MAXCPU) {
			parse_error(sn, "no cpu=", line);
			continue;
		}
		if (!kv_get(line, "level", &v, NULL, 0)) {
			long long q, quota, closed;

			sn->nlevel_lines++;
			if (v < 0 || v >= RSDL_LEVELS)
				parse_error(sn, "level out of range", line);
			if (kv_get(line, "array", NULL, arr, sizeof(arr)) ||
			    (strcmp(arr, "active") && strcmp(arr, "expired")))
				parse_error(sn, "array", line);
			if (kv_get(line, "queued", &q, NULL, 0) || q < 0)
				parse_error(sn, "queued", line);
			else
				sn->queued[c] += q;
			if (kv_get(line, "quota_ns", &quota, NULL, 0))
				parse_error(sn, "quota_ns", line);
			if (kv_get(line, "closed", &closed, NULL, 0) || (closed != 0 && closed != 1))
				parse_error(sn, "closed", line);
			if (c == hog_cpu)
				sn->hog_levels++;
			continue;
		}
		if (rsdl_debugfs_cpu_line(line, &sn->cpu[c])) {
			parse_error(sn, "per-CPU record", line);
			continue;
		}
		if (sn->cpu[c].prio_level < 0 || sn->cpu[c].prio_level >= RSDL_LEVELS ||
		    sn->cpu[c].rotation < 0 || sn->cpu[c].minor < 0 || sn->cpu[c].major < 0 ||
		    sn->cpu[c].overrun < 0 || sn->cpu[c].charge < 0 || sn->cpu[c].nr_running < 0)
			parse_error(sn, "per-CPU value out of range", line);
		if (sn->seen[c]++)
			parse_error(sn, "duplicate per-CPU record", line);
		sn->ncpu_lines++;
	}
	return 0;
}

int main(void)
{
	int cpu = test_cpu(), n = ncpus_online();
	struct task_cfg c[3] = { { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 },
				 { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 },
				 { .cpu = cpu, .policy = SCHED_OTHER, .nice = 5 } };
	struct rsdl_task t[3] = { { SCHED_OTHER, 0 }, { SCHED_OTHER, 0 }, { SCHED_OTHER, 5 } };
	struct hog_slot *h = shared_alloc(sizeof(*h) * 3);
	static struct snapshot a, b;
	struct ktap_sub s = { 0 };
	int64_t sumE = 0, t0, t1;
	double expect;
	pid_t pid[3];

	ktap_plan("rsdl_rotations", 3);
	ktap_watchdog(60);
	ktap_diag("scheduler: %s, %d CPUs online, hogs on CPU %d", sched_name(), n, cpu);
	if (n > MAXCPU)
		ktap_bail("more than %d CPUs", MAXCPU);
	become_controller_or_bail();
	rr_interval_set_or_bail(RR_MS);
	for (int i = 0; i < 3; i++) {
		pid[i] = spawn_hog(&c[i], &h[i], HOG_COUNT, 30 * NSEC_PER_SEC);
		sumE += rsdl_entitlement_ns(t[i].policy, t[i].nice, RR_MS);
	}
	if (hogs_wait_ready(h, 3, 5 * NSEC_PER_SEC))
		ktap_bail("hogs did not start");
	sleep_ms(200);

	t0 = now_ns();
	if (take(&a, cpu, 1))
		ktap_bail("cannot read %s", RSDL_DEBUGFS_PATH);
	sleep_ms(1100);
	take(&b, cpu, 0);
	t1 = now_ns();
	for (int i = 0; i < 3; i++)
		kill_child(pid[i]);

	ktap_expect(&s, a.errors == 0 && b.errors == 0, "%d + %d parse errors", a.errors, b.errors);
	ktap_expect(&s, a.rr == RR_MS, "header rr_interval_ms=%lld, sysctl %d", a.rr, RR_MS);
	for (int i = 0; i < n; i++)
		ktap_expect(&s, a.seen[i] == 1 && b.seen[i] == 1, "CPU %d: %d/%d per-CPU records", i,
			    a.seen[i], b.seen[i]);
	for (int i = 0; i < n; i++) {
		ktap_diag("CPU %d: nr_running %lld / %lld, sum of queued %lld / %lld (1st / 2nd "
			  "snapshot)", i, a.cpu[i].nr_running, b.cpu[i].nr_running, a.queued[i],
			  b.queued[i]);
		ktap_expect(&s, a.queued[i] == a.cpu[i].nr_running &&
				    b.queued[i] == b.cpu[i].nr_running,
			    "CPU %d: sum of queued %lld / %lld != nr_running %lld / %lld", i,
			    a.queued[i], b.queued[i], a.cpu[i].nr_running, b.cpu[i].nr_running);
	}
	ktap_expect(&s, a.cpu[cpu].nr_running >= 3, "hog CPU nr_running %lld, want >= 3",
		    a.cpu[cpu].nr_running);
	ktap_expect(&s, a.hog_levels > 0, "no per-level record for the hog CPU");
	ktap_diag("%d per-CPU and %d per-level records parsed", a.ncpu_lines, a.nlevel_lines);
	ktap_sub_end(&s, "debugfs_format");

	memset(&s, 0, sizeof(s));
	{
		struct rsdl_cpu_stat *x = &a.cpu[cpu], *y = &b.cpu[cpu];
		long long dmaj = y->major - x->major, dmin = y->minor - x->minor;
		long long drot = y->rotation - x->rotation;

		expect = (double)(t1 - t0) / sumE;
		ktap_diag("CPU %d over %.0f ms: major_rotations +%lld (expected %.1f = window / sum E "
			  "%.0f ms, bounds %.1f..%.1f), rotation +%lld, minor_rotations +%lld", cpu,
			  MS(t1 - t0), dmaj, expect, MS(sumE), 0.7 * expect, 1.3 * expect, drot, dmin);
		ktap_expect(&s, dmaj >= 0.7 * expect && dmaj <= 1.3 * expect,
			    "major_rotations +%lld, expected %.1f +-30%%", dmaj, expect);
		ktap_expect(&s, llabs(drot - dmaj) <= 1, "rotation +%lld vs major +%lld", drot, dmaj);
		ktap_expect(&s, dmin >= dmaj && dmin > 0, "minor_rotations +%lld < major +%lld", dmin,
			    dmaj);
	}
	ktap_sub_end(&s, "rotations_advance");

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < n; i++) {
		ktap_diag("CPU %d: max_level_overrun_ns %lld, max_charge_ns %lld", i, b.cpu[i].overrun,
			  b.cpu[i].charge);
		ktap_expect(&s, b.cpu[i].overrun <= b.cpu[i].charge,
			    "CPU %d: overrun %lld > max charge %lld", i, b.cpu[i].overrun,
			    b.cpu[i].charge);
	}
	ktap_expect(&s, b.cpu[cpu].charge > 0, "hog CPU max_charge_ns is 0");
	ktap_sub_end(&s, "overrun_within_charge");
	ktap_finish();
}
