// SPDX-License-Identifier: GPL-2.0
/*
 * affinity - CPU affinity is obeyed and invalid masks are refused.
 *
 * Expected: the core's sched_setaffinity() contract, the same on both
 * schedulers (sched-rsdl.rst, SMP: affinity changes move tasks through the
 * core as for any class). A failure means a task ran on a CPU outside its
 * mask, did not follow a new mask, or a bad mask was accepted or changed
 * something.
 *
 * Default mode (any CPU count):
 *  1. pinned_never_migrate: one hog pinned to each online CPU samples
 *     sched_getcpu() on every loop pass while ncpus+1 unpinned hogs load the
 *     machine for 2 s; no sample may be on another CPU, se.nr_migrations of a
 *     pinned hog may not grow, and every hog must progress.
 *  2. empty_mask_einval: an empty mask -> EINVAL, affinity unchanged.
 *  3. nonexistent_cpu_einval: a mask holding only CPUs that are not possible
 *     (the first absent CPU number, and CPU 1023) -> EINVAL, unchanged.
 *  4. mixed_mask_keeps_valid_cpu: {valid CPU, absent CPU} is accepted and
 *     reads back as the valid CPU alone (the kernel ANDs with the possible
 *     mask); sched_getaffinity with a length that is not a multiple of
 *     sizeof(long) -> EINVAL.
 * --migrate mode (needs 2 online CPUs; suite.list marks it smp2):
 *  1. running_hog_follows_affinity: a running hog is re-pinned 10 times
 *     between CPU 0 and 1; it must report the new CPU within 10 ms and never
 *     run on the old one again. 10 ms: sched_setaffinity() on a running task
 *     migrates it through the stopper before returning, and the target CPU has
 *     nothing else to run (the controller polls from the other CPU, every
 *     1 ms), so the call, an idle exit on the target and one poll period
 *     separate the call from the first sample on the new CPU.
 *  2. offline_cpu_mask_einval: with CPU 1 offline, a mask of {1} -> EINVAL
 *     and the affinity is unchanged; CPU 1 is brought back online.
 */
#include "util.h"

static int n_online;

static int possible_cpu_count(void)
{
	char buf[256];
	int max = n_online - 1;

	/* "0-1", "0" or "0-3,5": the highest CPU number + 1 */
	if (read_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) < 0)
		return n_online;
	for (char *p = buf; *p; p++) {
		if (isdigit((unsigned char)*p) && (p == buf || !isdigit((unsigned char)p[-1]))) {
			int v = atoi(p);

			if (v > max)
				max = v;
		}
	}
	return max + 1;
}

static void test_pinned(void)
{
	int np = n_online, nu = n_online + 1;
	struct hog_slot *s = shared_alloc(sizeof(*s) * (np + nu));
	pid_t pid[64];
	long long m0[32], m1[32];
	struct ktap_sub sub = { 0 };

	for (int i = 0; i < np + nu; i++) {
		struct task_cfg c = { .cpu = i < np ? i : -1, .policy = SCHED_OTHER };

		s[i].want_cpu = i < np ? i : -1;
		pid[i] = spawn_hog(&c, &s[i], i < np ? HOG_GETCPU : HOG_COUNT, 30 * NSEC_PER_SEC);
	}
	if (hogs_wait_ready(s, np + nu, 5 * NSEC_PER_SEC)) {
		ktap_fail("pinned_never_migrate", "hogs did not start");
		goto out;
	}
	sleep_ms(100);
	for (int i = 0; i < np; i++) {
		if (sched_field(pid[i], "se.nr_migrations", &m0[i]))
			m0[i] = -1;
		s[i].wrong_cpu = 0;
	}
	{
		uint64_t it0[64];

		for (int i = 0; i < np + nu; i++)
			it0[i] = s[i].iters;
		sleep_ms(2000);
		for (int i = 0; i < np + nu; i++) {
			long long run = -1, wait = -1;

			schedstat_read(pid[i], &run, &wait, NULL);
			if (!ktap_expect(&sub, s[i].iters > it0[i], "hog %d (%s) made no progress", i,
					 i < np ? "pinned" : "unpinned"))
				ktap_diag("hog %d: state %c, runtime %.1f ms, run delay %.1f ms, "
					  "%llu passes", i, proc_state(pid[i]), MS(run), MS(wait),
					  (unsigned long long)s[i].iters);
		}
	}
	for (int i = 0; i < np; i++) {
		if (sched_field(pid[i], "se.nr_migrations", &m1[i]))
			m1[i] = -1;
		ktap_diag("hog pinned to CPU %d: %llu samples on other CPUs, last on CPU %d, "
			  "nr_migrations %lld -> %lld", i, (unsigned long long)s[i].wrong_cpu,
			  s[i].cpu, m0[i], m1[i]);
		ktap_expect(&sub, s[i].wrong_cpu == 0, "hog pinned to CPU %d ran elsewhere", i);
		ktap_expect(&sub, m0[i] >= 0 && m1[i] == m0[i],
			    "hog pinned to CPU %d: nr_migrations %lld -> %lld", i, m0[i], m1[i]);
	}
	if (n_online == 1)
		ktap_diag("one CPU online: only progress and sampling are exercised here");
	ktap_sub_end(&sub, "pinned_never_migrate");
out:
	for (int i = 0; i < np + nu; i++)
		kill_child(pid[i]);
	munmap(s, sizeof(*s) * (np + nu));
}

static int same_mask(pid_t pid, const cpu_set_t *want)
{
	cpu_set_t now;

	CPU_ZERO(&now);
	if (sched_getaffinity(pid, sizeof(now), &now))
		return 0;
	return CPU_EQUAL(&now, want);
}

static void test_invalid_masks(pid_t victim)
{
	cpu_set_t before, m;
	struct ktap_sub s = { 0 };
	int absent = possible_cpu_count(), r;

	CPU_ZERO(&before);
	if (sched_getaffinity(victim, sizeof(before), &before))
		ktap_bail("sched_getaffinity: %s", strerror(errno));

	CPU_ZERO(&m);
	r = sched_setaffinity(victim, sizeof(m), &m) ? -errno : 0;
	ktap_check(r == -EINVAL && same_mask(victim, &before), "empty_mask_einval",
		   "empty mask: got %d (want -EINVAL), mask unchanged: %d", r,
		   same_mask(victim, &before));

	ktap_diag("possible CPUs: %d; using CPU %d and 1023 as absent CPUs", absent, absent);
	CPU_ZERO(&m);
	CPU_SET(absent, &m);
	r = sched_setaffinity(victim, sizeof(m), &m) ? -errno : 0;
	ktap_expect(&s, r == -EINVAL, "mask {%d}: got %d, want -EINVAL", absent, r);
	ktap_expect(&s, same_mask(victim, &before), "mask {%d} changed the affinity", absent);
	CPU_ZERO(&m);
	CPU_SET(1023, &m);
	r = sched_setaffinity(victim, sizeof(m), &m) ? -errno : 0;
	ktap_expect(&s, r == -EINVAL, "mask {1023}: got %d, want -EINVAL", r);
	ktap_expect(&s, same_mask(victim, &before), "mask {1023} changed the affinity");
	ktap_sub_end(&s, "nonexistent_cpu_einval");

	memset(&s, 0, sizeof(s));
	CPU_ZERO(&m);
	CPU_SET(0, &m);
	CPU_SET(absent, &m);
	r = sched_setaffinity(victim, sizeof(m), &m) ? -errno : 0;
	ktap_expect(&s, r == 0, "mask {0,%d}: got %d, want success", absent, r);
	CPU_ZERO(&m);
	CPU_SET(0, &m);
	ktap_expect(&s, same_mask(victim, &m), "mask {0,%d} does not read back as {0}", absent);
	{
		unsigned long buf[16];

		r = syscall(SYS_sched_getaffinity, victim, 4, buf);
		ktap_expect(&s, r < 0 && errno == EINVAL,
			    "sched_getaffinity len 4: %d/%d, want EINVAL", r, errno);
		r = syscall(SYS_sched_getaffinity, victim, sizeof(buf), buf);
		ktap_expect(&s, r > 0 && (size_t)r <= sizeof(buf) && r % sizeof(long) == 0,
			    "sched_getaffinity len %zu returned %d", sizeof(buf), r);
	}
	sched_setaffinity(victim, sizeof(before), &before);
	ktap_sub_end(&s, "mixed_mask_keeps_valid_cpu");
}

static void cpu1_online(void)
{
	write_file("/sys/devices/system/cpu/cpu1/online", "1");
}

static void test_migrate(void)
{
	struct hog_slot *s = shared_alloc(sizeof(*s));
	struct task_cfg c = { .cpu = 0, .policy = SCHED_OTHER };
	struct ktap_sub sub = { 0 };
	int64_t worst = 0;
	pid_t pid;

	s->want_cpu = -1;
	pid = spawn_hog(&c, s, HOG_GETCPU, 30 * NSEC_PER_SEC);
	if (hogs_wait_ready(s, 1, 5 * NSEC_PER_SEC)) {
		ktap_fail("running_hog_follows_affinity", "hog did not start");
		goto out;
	}
	sleep_ms(50);
	for (int i = 0; i < 10; i++) {
		int target = (i & 1) ? 0 : 1;
		cpu_set_t m;
		int64_t t0, t, tret;
		uint64_t it;

		/* stay off the target CPU so polling does not compete with the hog there */
		pin_self(1 - target);
		s->want_cpu = -1;
		CPU_ZERO(&m);
		CPU_SET(target, &m);
		t0 = now_ns();
		if (sched_setaffinity(pid, sizeof(m), &m)) {
			ktap_expect(&sub, 0, "sched_setaffinity {%d}: %s", target, strerror(errno));
			break;
		}
		tret = now_ns() - t0;
		it = s->iters;
		while ((s->cpu != target || s->iters < it + 2) && now_ns() - t0 < NSEC_PER_SEC)
			sleep_ms(1);
		/* when the hog itself first saw the new CPU (not when we noticed) */
		t = s->cpu == target ? s->cpu_change_ns - t0 : now_ns() - t0;
		if (t > worst)
			worst = t;
		ktap_diag("move %d to CPU %d: call returned after %.2f ms, hog on CPU %d after "
			  "%.2f ms", i, target, MS(tret), s->cpu, MS(t));
		ktap_expect(&sub, s->cpu == target && t <= 10 * NSEC_PER_MSEC,
			    "move %d to CPU %d: hog on CPU %d after %.2f ms (bound 10 ms)", i, target,
			    s->cpu, MS(t));
		s->wrong_cpu = 0;
		s->want_cpu = target;
		sleep_ms(20);
		ktap_expect(&sub, s->wrong_cpu == 0, "move %d: %llu samples off CPU %d afterwards",
			    i, (unsigned long long)s->wrong_cpu, target);
	}
	ktap_diag("worst time from sched_setaffinity() to a sample on the new CPU: %.3f ms "
		  "(bound 10 ms)", MS(worst));
	ktap_sub_end(&sub, "running_hog_follows_affinity");
out:
	kill_child(pid);
	munmap(s, sizeof(*s));
}

static void test_offline_mask(pid_t victim)
{
	const char *path = "/sys/devices/system/cpu/cpu1/online";
	struct ktap_sub s = { 0 };
	cpu_set_t before, m;
	ssize_t w;
	int r;

	ktap_on_exit(cpu1_online);
	pin_self(0);
	w = write_file(path, "0");
	if (w < 0) {
		ktap_fail("offline_cpu_mask_einval", "cannot offline CPU 1: %s", strerror(-w));
		return;
	}
	/* the effective mask without CPU 1, as the kernel reports it while it is offline */
	CPU_ZERO(&before);
	sched_getaffinity(victim, sizeof(before), &before);
	CPU_ZERO(&m);
	CPU_SET(1, &m);
	r = sched_setaffinity(victim, sizeof(m), &m) ? -errno : 0;
	ktap_expect(&s, r == -EINVAL, "mask {1} with CPU 1 offline: got %d, want -EINVAL", r);
	ktap_expect(&s, same_mask(victim, &before), "affinity changed by the rejected call");
	w = write_file(path, "1");
	ktap_expect(&s, w >= 0 && cpu_is_online(1), "CPU 1 did not come back online");
	ktap_sub_end(&s, "offline_cpu_mask_einval");
}

int main(int argc, char **argv)
{
	int migrate = argc > 1 && !strcmp(argv[1], "--migrate");
	pid_t victim;

	n_online = ncpus_online();
	ktap_plan("affinity", migrate ? 2 : 4);
	ktap_watchdog(60);
	ktap_diag("scheduler: %s, %d CPUs online", sched_name(), n_online);
	if (n_online > 32)
		ktap_bail("more than 32 CPUs is not supported by this test");
	victim = fork_child();
	if (victim == 0) {
		for (;;)
			pause();
	}
	if (migrate) {
		if (n_online < 2)
			ktap_bail("--migrate needs 2 online CPUs, %d online", n_online);
		/* FIFO so that sharing a CPU with the hog never delays the polling */
		if (become_controller(50))
			ktap_bail("cannot become SCHED_FIFO controller: %s", strerror(errno));
		test_migrate();
		test_offline_mask(victim);
	} else {
		test_pinned();
		test_invalid_masks(victim);
	}
	ktap_finish();
}
