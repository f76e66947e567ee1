// SPDX-License-Identifier: GPL-2.0
/*
 * cpuset_move - cgroup v2 cpuset changes move queued and running tasks, and the
 * scheduler keeps them inside the new set (needs 2 CPUs).
 *
 * Expected: sched-rsdl.rst, SMP (cpuset changes move tasks through the core;
 * the periodic balance honours cpuset partitions), Share (equal E(p) on RSDL,
 * equal weights on EEVDF) and rule 12 (a moved task keeps what is left of its
 * entitlement). A failure means a task ran outside its cpuset, the tasks of
 * one CPU did not share it evenly, or the balancer left CPUs unused.
 *
 * Three nice-0 hogs, allowed on every CPU, note sched_getcpu() on every pass of
 * their loop. The controller (SCHED_FIFO, CPU 0) makes a cpuset group and:
 *  1. join_group: cpuset.cpus = {L} (L = the last online CPU), then moves the
 *     hogs into the group. Moving a task into a cpuset changes its allowed
 *     CPUs before the write to cgroup.procs returns (a running task is moved
 *     by the stopper, a queued one directly), so no pass that started after
 *     the last write may run outside {L}. Every hog then gets 1/3 of CPU L
 *     +- 0.05 over 1 s. On RSDL the shares are only equal from the first
 *     major rotation on (rule 12), so the 1 s starts after the settle time
 *     3 x E(nice 0) + 100 ms (460 ms at rr_interval 6; 100 ms on EEVDF).
 *  2. change_cpus: cpuset.cpus = {0} while they run: the same two checks.
 *  3. widen: cpuset.cpus = all online CPUs. Nothing moves a task for that;
 *     the scheduler's balancing must spread them: in a 1 s window starting
 *     200 ms later the three hogs together run >= 0.9 x min(3, CPUs) CPUs.
 *  4. teardown: the hogs go back to the root group, the group is removed.
 */
#include <sys/stat.h>
#include "util.h"
#include "cgroup.h"

#define NHOGS 3
#define NPHASES 4

struct ctl {
	volatile int phase; /* 0: no check yet; 1..3: the phases above */
	volatile int stop;
	volatile int64_t since[NPHASES];
	volatile uint64_t allowed[NPHASES];
};

struct cs_hog {
	volatile uint64_t iters;
	volatile uint64_t bad[NPHASES];
	volatile int bad_cpu;
	char pad[64];
};

static struct ctl *ctl;
static struct cs_hog *hogs;
static pid_t pids[NHOGS];
static char grp[200];
static int ncpu, last, settle_ms = 100;

static void cs_hog_loop(struct cs_hog *h)
{
	if (unpin_self())
		_exit(1);
	for (;;) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		int64_t t = now_ns();
		int cpu = sched_getcpu();
		int ph = __atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE);

		/* t was read before the CPU: a pass that began after since[ph] */
		if (ph > 0 && t > ctl->since[ph] && cpu >= 0 && cpu < 64 &&
		    !(ctl->allowed[ph] & (1ULL << cpu))) {
			h->bad[ph]++;
			h->bad_cpu = cpu;
		}
		h->iters++;
		if (ctl->stop)
			_exit(0);
	}
}

/* Publish phase @ph: passes after now must stay inside @allowed */
static void phase_begin(int ph, uint64_t allowed)
{
	ctl->allowed[ph] = allowed;
	ctl->since[ph] = now_ns();
	__atomic_store_n(&ctl->phase, ph, __ATOMIC_RELEASE);
}

/* Each hog's runtime over @ms, as a share of one CPU */
static void shares(int64_t ms, double *share)
{
	long long r0[NHOGS], r1[NHOGS];
	int64_t t0, t1;

	for (int i = 0; i < NHOGS; i++)
		r0[i] = task_runtime_ns(pids[i]);
	t0 = now_ns();
	sleep_ms(ms);
	for (int i = 0; i < NHOGS; i++)
		r1[i] = task_runtime_ns(pids[i]);
	t1 = now_ns();
	for (int i = 0; i < NHOGS; i++)
		share[i] = (double)(r1[i] - r0[i]) / (t1 - t0);
}

static void check_inside(struct ktap_sub *s, int ph, const char *set)
{
	double share[NHOGS];
	uint64_t it0[NHOGS];

	sleep_ms(settle_ms);
	for (int i = 0; i < NHOGS; i++)
		it0[i] = hogs[i].iters;
	shares(1000, share);
	for (int i = 0; i < NHOGS; i++) {
		ktap_diag("  hog %d: share %.3f (expected 0.283..0.383), passes outside %s after "
			  "the write: %llu (expected 0)", i, share[i], set,
			  (unsigned long long)hogs[i].bad[ph]);
		ktap_expect(s, hogs[i].iters > it0[i], "hog %d made no progress", i);
		ktap_expect(s, !hogs[i].bad[ph], "hog %d ran %llu passes outside %s (CPU %d)", i,
			    (unsigned long long)hogs[i].bad[ph], set, hogs[i].bad_cpu);
		ktap_expect(s, share[i] >= 1.0 / 3 - 0.05 && share[i] <= 1.0 / 3 + 0.05,
			    "hog %d share %.3f", i, share[i]);
	}
}

static void cleanup(void)
{
	char buf[32];

	ctl->stop = 1;
	for (int i = 0; i < NHOGS; i++) {
		if (pids[i] > 0) {
			snprintf(buf, sizeof(buf), "%d", (int)pids[i]);
			cg_write(cg_root, "cgroup.procs", buf);
		}
	}
	if (grp[0])
		rmdir(grp);
}

int main(void)
{
	struct ktap_sub s = { 0 };
	char buf[64], set[32];
	double share[NHOGS], sum;
	int r;

	ktap_plan("cpuset_move", 4);
	ncpu = ncpus_online();
	last = test_cpu();
	ktap_diag("scheduler: %s, %d CPUs online, %d nice-0 hogs", sched_name(), ncpu, NHOGS);
	if (ncpu < 2 || last < 1)
		ktap_bail("needs 2 online CPUs");
	if (cg_find_root())
		ktap_bail("no cgroup2 mount in /proc/mounts");
	if (sched_is_rsdl()) {
		int rr = rr_interval_get();

		if (rr < 1)
			ktap_bail("cannot read %s", RR_INTERVAL_PATH);
		settle_ms = NHOGS * rsdl_entitlement_ns(SCHED_OTHER, 0, rr) / NSEC_PER_MSEC + 100;
	}
	ktap_diag("shares are measured from %d ms after each change on", settle_ms);
	become_controller_or_bail();
	r = cg_write(cg_root, "cgroup.subtree_control", "+cpuset");
	if (r)
		ktap_bail("enable +cpuset in %s: %s", cg_root, strerror(-r));
	snprintf(grp, sizeof(grp), "%s/labcs-%d", cg_root, (int)getpid());
	if (mkdir(grp, 0755))
		ktap_bail("mkdir %s: %s", grp, strerror(errno));
	ktap_on_exit(cleanup);

	ctl = shared_alloc(sizeof(*ctl));
	hogs = shared_alloc(sizeof(*hogs) * NHOGS);
	for (int i = 0; i < NHOGS; i++) {
		pids[i] = fork_child();
		if (pids[i] == 0)
			cs_hog_loop(&hogs[i]);
	}
	sleep_ms(100);

	/* 1. join_group */
	snprintf(set, sizeof(set), "%d", last);
	r = cg_write(grp, "cpuset.cpus", set);
	ktap_expect(&s, r == 0, "cpuset.cpus = %s: %s", set, strerror(-r));
	for (int i = 0; i < NHOGS; i++) {
		snprintf(buf, sizeof(buf), "%d", (int)pids[i]);
		r = cg_write(grp, "cgroup.procs", buf);
		ktap_expect(&s, r == 0, "moving hog %d into the group: %s", i, strerror(-r));
	}
	phase_begin(1, 1ULL << last);
	ktap_diag("join_group: cpuset.cpus %s, hogs moved in", set);
	check_inside(&s, 1, set);
	ktap_sub_end(&s, "join_group");

	/* 2. change_cpus */
	r = cg_write(grp, "cpuset.cpus", "0");
	ktap_expect(&s, r == 0, "cpuset.cpus = 0: %s", strerror(-r));
	phase_begin(2, 1ULL);
	ktap_diag("change_cpus: cpuset.cpus 0 while the hogs run");
	check_inside(&s, 2, "0");
	ktap_sub_end(&s, "change_cpus");

	/* 3. widen */
	snprintf(set, sizeof(set), "0-%d", ncpu - 1);
	r = cg_write(grp, "cpuset.cpus", set);
	ktap_expect(&s, r == 0, "cpuset.cpus = %s: %s", set, strerror(-r));
	phase_begin(3, ~0ULL);
	sleep_ms(200);
	shares(1000, share);
	sum = 0;
	for (int i = 0; i < NHOGS; i++)
		sum += share[i];
	ktap_diag("widen: cpuset.cpus %s; shares %.3f %.3f %.3f, sum %.2f CPUs (expected >= "
		  "0.9 x %d = %.2f)", set, share[0], share[1], share[2], sum,
		  ncpu < NHOGS ? ncpu : NHOGS, 0.9 * (ncpu < NHOGS ? ncpu : NHOGS));
	ktap_expect(&s, sum >= 0.9 * (ncpu < NHOGS ? ncpu : NHOGS), "the hogs used %.2f CPUs",
		    sum);
	ktap_sub_end(&s, "widen");

	/* 4. teardown */
	ctl->stop = 1;
	for (int i = 0; i < NHOGS; i++) {
		snprintf(buf, sizeof(buf), "%d", (int)pids[i]);
		r = cg_write(cg_root, "cgroup.procs", buf);
		ktap_expect(&s, r == 0, "moving hog %d back to the root: %s", i, strerror(-r));
	}
	for (int i = 0; i < NHOGS; i++) {
		int st = reap_child(pids[i]);

		ktap_expect(&s, st == 0, "hog %d exit status %d", i, st);
		pids[i] = 0;
	}
	r = rmdir(grp) ? -errno : 0;
	ktap_expect(&s, r == 0, "rmdir %s: %s", grp, strerror(-r));
	if (!r)
		grp[0] = 0;
	ktap_sub_end(&s, "teardown");
	ktap_finish();
}
