// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup_cpu - the cgroup v2 cpu controller keeps working.
 *
 * Expected: sched-rsdl.rst, "Interaction with the rest of the kernel",
 * cgroups: the controller's weights, cpu.max and cpu.idle act on the fair
 * class only and do not apply to RSDL tasks; moving tasks between groups
 * works. On EEVDF, cpu.max's bandwidth R/P. A failure means the controller's
 * files, a move into or out of a group, or (EEVDF) bandwidth control broke.
 *
 *  1. cpu_controller_setup: enable +cpu in the root's subtree_control, create
 *     a child group, cpu.weight / cpu.weight.nice / cpu.max accept valid
 *     values and read them back, and reject out-of-range ones: cpu.weight 0
 *     and 10001 -> ERANGE (cpu_weight_write_u64, range 1..10000), a cpu.max
 *     period below 1 ms -> EINVAL (tg_set_cfs_bandwidth).
 *  2. hog_runs_in_group: a hog pinned to one CPU is moved into the group
 *     (cgroup.procs, /proc/<pid>/cgroup shows it) and keeps running, and the
 *     group's cpu.stat usage_usec advances.
 *     EEVDF: with cpu.max = "10000 100000" the hog, alone on its CPU, gets
 *     10 % +- 3 points (2 s = 20 periods, so the window's phase moves the
 *     share by < 0.5 point), and usage_usec matches its schedstat runtime
 *     within 10 %.
 *     RSDL: cpu.weight and cpu.max are inert for RSDL tasks, so only "no
 *     error and progress" is asserted; the share is printed.
 *  3. group_teardown: the hog moves back to the root, cpu.max "max 100000" is
 *     accepted, and the empty group is removed (rmdir succeeds).
 */
#include <sys/stat.h>
#include "cgroup.h"

static char grp[200];

static long long usage_usec(void)
{
	char buf[1024];
	long long v = -1;
	char *p;

	if (cg_read(grp, "cpu.stat", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "usage_usec ");
	if (p)
		v = strtoll(p + 11, NULL, 10);
	return v;
}

static void remove_group(void)
{
	if (grp[0])
		rmdir(grp);
}

static int setup(void)
{
	struct ktap_sub s = { 0 };
	char buf[256];
	int r;

	if (cg_find_root()) {
		ktap_fail("cpu_controller_setup", "no cgroup2 mount in /proc/mounts");
		return -1;
	}
	r = cg_read(cg_root, "cgroup.controllers", buf, sizeof(buf));
	ktap_diag("cgroup2 at %s, controllers: %s", cg_root, r ? "?" : buf);
	r = cg_write(cg_root, "cgroup.subtree_control", "+cpu");
	ktap_expect(&s, r == 0, "enable +cpu in %s: %s", cg_root, strerror(-r));
	snprintf(grp, sizeof(grp), "%s/labtest-%d", cg_root, (int)getpid());
	if (mkdir(grp, 0755)) {
		ktap_expect(&s, 0, "mkdir %s: %s", grp, strerror(errno));
		grp[0] = '\0';
		ktap_sub_end(&s, "cpu_controller_setup");
		return -1;
	}
	ktap_on_exit(remove_group);
	r = cg_write(grp, "cpu.weight", "50");
	ktap_expect(&s, r == 0, "cpu.weight 50: %s", strerror(-r));
	ktap_expect(&s, !cg_read(grp, "cpu.weight", buf, sizeof(buf)) && !strcmp(buf, "50"),
		    "cpu.weight reads '%s'", buf);
	r = cg_write(grp, "cpu.weight", "0");
	ktap_expect(&s, r == -ERANGE, "cpu.weight 0: %s, want ERANGE", strerror(-r));
	r = cg_write(grp, "cpu.weight", "10001");
	ktap_expect(&s, r == -ERANGE, "cpu.weight 10001: %s, want ERANGE", strerror(-r));
	ktap_expect(&s, !cg_read(grp, "cpu.weight", buf, sizeof(buf)) && !strcmp(buf, "50"),
		    "cpu.weight changed by rejected writes: '%s'", buf);
	r = cg_write(grp, "cpu.weight.nice", "5");
	ktap_expect(&s, r == 0, "cpu.weight.nice 5: %s", strerror(-r));
	ktap_expect(&s, !cg_read(grp, "cpu.weight.nice", buf, sizeof(buf)) && !strcmp(buf, "5"),
		    "cpu.weight.nice reads '%s'", buf);
	r = cg_write(grp, "cpu.max", "10000 100000");
	ktap_expect(&s, r == 0, "cpu.max '10000 100000': %s", strerror(-r));
	r = cg_write(grp, "cpu.max", "10000 500");
	ktap_expect(&s, r == -EINVAL, "cpu.max period 500 us: %s, want EINVAL", strerror(-r));
	ktap_expect(&s, !cg_read(grp, "cpu.max", buf, sizeof(buf)) &&
			       !strcmp(buf, "10000 100000"),
		    "cpu.max reads '%s'", buf);
	ktap_sub_end(&s, "cpu_controller_setup");
	return s.nfail ? -1 : 0;
}

int main(void)
{
	int rsdl = sched_is_rsdl(), cpu = test_cpu(), ok;
	struct hog_slot *h = shared_alloc(sizeof(*h));
	struct task_cfg c = { .cpu = cpu, .policy = SCHED_OTHER };
	struct ktap_sub s = { 0 };
	char buf[512], pidstr[32];
	long long u0, u1, r0, r1;
	uint64_t i0, i1;
	int64_t t0, t1;
	pid_t hog;
	int r;

	ktap_plan("cgroup_cpu", 3);
	ktap_watchdog(60);
	ktap_diag("scheduler: %s, %d CPUs online, test CPU %d", sched_name(), ncpus_online(), cpu);
	become_controller(50);
	pin_self(ctl_cpu());
	ok = !setup();
	if (!ok && !grp[0])
		ktap_bail("no test group");

	hog = spawn_hog(&c, h, HOG_COUNT, 30 * NSEC_PER_SEC);
	hogs_wait_ready(h, 1, 5 * NSEC_PER_SEC);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)hog);
	r = cg_write(grp, "cgroup.procs", pidstr);
	ktap_expect(&s, r == 0, "moving the hog into the group: %s", strerror(-r));
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)hog);
		read_file(path, buf, sizeof(buf));
		ktap_expect(&s, strstr(buf, strrchr(grp, '/')) != NULL,
			    "/proc/<hog>/cgroup does not name the group: %s", rtrim(buf));
	}
	sleep_ms(300);
	u0 = usage_usec();
	schedstat_read(hog, &r0, NULL, NULL);
	i0 = h->iters;
	t0 = now_ns();
	sleep_ms(2000);
	u1 = usage_usec();
	schedstat_read(hog, &r1, NULL, NULL);
	i1 = h->iters;
	t1 = now_ns();
	{
		double share = (double)(r1 - r0) / (t1 - t0);
		double usage_ns = (u1 - u0) * 1000.0;

		ktap_diag("hog in group with cpu.max 10000/100000: %.2f%% of CPU %d over %.0f ms "
			  "(schedstat), %llu loop passes; cpu.stat usage %.1f ms vs schedstat %.1f ms",
			  100 * share, cpu, MS(t1 - t0), (unsigned long long)(i1 - i0),
			  usage_ns / 1e6, MS(r1 - r0));
		ktap_expect(&s, i1 > i0, "the hog made no progress in the group");
		ktap_expect(&s, u0 >= 0 && u1 > u0, "cpu.stat usage_usec did not advance (%lld -> %lld)",
			    u0, u1);
		if (rsdl) {
			ktap_diag("RSDL: cpu.max/cpu.weight are inert for RSDL tasks; share not "
				  "asserted");
		} else {
			ktap_diag("EEVDF: expected 10.00%% +- 3 points");
			ktap_expect(&s, share >= 0.07 && share <= 0.13,
				    "EEVDF share %.2f%%, expected 10 +- 3", 100 * share);
			ktap_expect(&s, usage_ns >= 0.9 * (r1 - r0) && usage_ns <= 1.1 * (r1 - r0),
				    "usage_usec %.1f ms vs runtime %.1f ms", usage_ns / 1e6,
				    MS(r1 - r0));
		}
	}
	ktap_sub_end(&s, "hog_runs_in_group");

	memset(&s, 0, sizeof(s));
	r = cg_write(cg_root, "cgroup.procs", pidstr);
	ktap_expect(&s, r == 0, "moving the hog back to the root: %s", strerror(-r));
	r = cg_write(grp, "cpu.max", "max 100000");
	ktap_expect(&s, r == 0, "cpu.max 'max 100000': %s", strerror(-r));
	i0 = h->iters;
	sleep_ms(100);
	ktap_expect(&s, h->iters > i0, "hog stopped after leaving the group");
	kill_child(hog);
	r = rmdir(grp) ? -errno : 0;
	ktap_expect(&s, r == 0, "rmdir %s: %s", grp, strerror(-r));
	if (!r)
		grp[0] = '\0';
	ktap_sub_end(&s, "group_teardown");
	ktap_finish();
}
