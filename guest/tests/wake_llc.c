// SPDX-License-Identifier: GPL-2.0
/*
 * wake_llc - wakeup placement on a machine with several last-level caches
 * (suite.list: ",llc" boots, QEMU -smp 6,sockets=3,cores=2: three LLCs of
 * two CPUs).
 *
 * Expected: sched-rsdl.rst, "What RSDL does on real hardware", Topology: a
 * waking task goes to its previous CPU if idle, else to an idle CPU sharing
 * the previous CPU's last-level cache, else to an idle CPU sharing the
 * waker's, and only then further away (nearest sched domain first). A
 * failure means the wakee was sent to an idle CPU of a third cache (or left
 * on a busy one) while the waker's cache had an idle CPU.
 *
 * Setup, with the LLC groups G0 < G1 < G2 read from sysfs (cache index of
 * the highest level, shared_cpu_list; G0 holds CPU 0 and the controller,
 * which sleeps in waitpid()): nice-0 hogs pinned to both CPUs of G1, so the
 * wakee's previous CPU and its cache are busy; a nice-0 hog pinned to the
 * first CPU of G2 is the waker; the second CPU of G2 and all of G0 are idle.
 * The sleeper moves to the first CPU of G1 (affinity that CPU, then every
 * CPU: it stays there while it runs), arms a futex and waits; the waker
 * wakes it 1..3 ms later (FUTEX_WAKE, not a sync wakeup). The CPU it runs
 * on after the wait is recorded. NWAKE wakeups.
 *
 *  1. topology: at least three LLC groups of at least two CPUs each.
 *  2. waker_llc (RSDL): at least 95 % of the wakeups ran on the idle CPU of
 *     the waker's cache (the 5 % leave room for a kernel thread that happens
 *     to run there at that moment). Printed: the count per CPU and per
 *     group. A scan of every CPU in number order picks G0 instead.
 * On EEVDF (rsdl=off) the same counts are printed as a reference and only
 * "measured" is checked: fair's wake_affine() may keep the wakee near its
 * previous CPU.
 */
#include "util.h"

#define NWAKE 200
#define MAXCPU 64
#define RUN_MAX_NS (60 * NSEC_PER_SEC)

struct wl_shared {
	struct futex_wake f;
	int cpu[NWAKE];
	int n, err;
};

static struct wl_shared *w;
static uint64_t group[MAXCPU];	/* LLC groups as CPU bit masks, by lowest CPU */
static int ngroups;

/* The CPUs sharing @cpu's highest-level cache, 0 if sysfs has none */
static uint64_t llc_of(int cpu)
{
	char path[128], buf[256];
	int best = -1;
	uint64_t m = 0;

	for (int i = 0; i < 8; i++) {
		long level;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level",
			 cpu, i);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			break;
		level = strtol(buf, NULL, 10);
		if (level <= best)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, i);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		best = level;
		m = cpulist_bits(buf);
	}
	return m;
}

static void read_groups(int n)
{
	uint64_t seen = 0;

	for (int c = 0; c < n && c < MAXCPU; c++) {
		uint64_t g;

		if ((seen >> c) & 1)
			continue;
		g = llc_of(c);
		if (!g)
			g = 1ULL << c;
		group[ngroups++] = g;
		seen |= g;
	}
}

static int nth_cpu(uint64_t m, int k)
{
	for (int c = 0; c < MAXCPU; c++)
		if (((m >> c) & 1) && k-- == 0)
			return c;
	return -1;
}

/* The waker: spins; 1..3 ms after the sleeper armed the futex, wakes it */
static void waker(void *unused)
{
	(void)unused;
	futex_waker_loop(&w->f, 11, now_ns() + RUN_MAX_NS);
}

static void sleeper(void *arg)
{
	int prev = *(int *)arg;
	cpu_set_t all, one;
	int64_t end = now_ns() + RUN_MAX_NS;

	cpuset_online(&all);
	CPU_ZERO(&one);
	CPU_SET(prev, &one);
	while (w->n < NWAKE && now_ns() < end) {
		if (sched_setaffinity(0, sizeof(one), &one) ||
		    sched_setaffinity(0, sizeof(all), &all)) {
			w->err = errno;
			_exit(1);
		}
		if (futex_wait_woken(&w->f) < 0)
			continue;
		w->cpu[w->n++] = sched_getcpu();
	}
	_exit(0);
}

int main(void)
{
	struct hog_slot *hs = shared_alloc(sizeof(*hs) * 2);
	int n = ncpus_online(), ok_groups = 0, gw, gs, st, prev, waker_cpu, target;
	int per_cpu[MAXCPU] = { 0 }, in_group[MAXCPU] = { 0 };
	struct ktap_sub s = { 0 };
	pid_t hog[2], wk, sp;
	char b1[64], b2[64], b3[64];
	cpu_set_t one;
	int rsdl = sched_is_rsdl();

	ktap_plan("wake_llc", 2);
	ktap_watchdog(150);
	read_groups(n);
	for (int g = 0; g < ngroups; g++) {
		ktap_diag("LLC group %d: CPUs %s", g, bits_str(group[g], b1, sizeof(b1)));
		ok_groups += __builtin_popcountll(group[g]) >= 2;
	}
	ktap_expect(&s, ngroups >= 3 && ok_groups >= 3,
		    "%d LLC groups, %d of them with 2 CPUs or more: needs 3 (boot with "
		    "-smp 6,sockets=3,cores=2)", ngroups, ok_groups);
	ktap_sub_end(&s, "topology");
	if (s.nfail)
		ktap_bail("no usable topology");

	prev = nth_cpu(group[1], 0);
	waker_cpu = nth_cpu(group[2], 0);
	target = nth_cpu(group[2], 1);
	ktap_diag("scheduler: %s, %d CPUs; hogs on CPUs %d and %d (the wakee's cache %s), waker "
		  "on CPU %d, idle: CPU %d (the waker's cache %s) and %s; %d wakeups",
		  sched_name(), n, prev, nth_cpu(group[1], 1), bits_str(group[1], b1, sizeof(b1)),
		  waker_cpu, target, bits_str(group[2], b2, sizeof(b2)),
		  bits_str(group[0], b3, sizeof(b3)), NWAKE);
	become_controller_or_bail();
	w = shared_alloc(sizeof(*w));
	for (int i = 0; i < 2; i++) {
		struct task_cfg c = { .cpu = nth_cpu(group[1], i), .policy = SCHED_OTHER };

		hog[i] = spawn_hog(&c, &hs[i], HOG_COUNT, RUN_MAX_NS);
	}
	CPU_ZERO(&one);
	CPU_SET(waker_cpu, &one);
	wk = spawn_gated(waker, NULL, &one, &gw);
	gate_open(&gw);
	sleep_ms(100);
	sp = spawn_gated(sleeper, &prev, NULL, &gs);
	gate_open(&gs);
	st = reap_child(sp);
	w->f.stop = 1;
	kill_child(wk);
	kill_child(hog[0]);
	kill_child(hog[1]);

	for (int i = 0; i < w->n; i++) {
		int c = w->cpu[i];

		if (c < 0 || c >= MAXCPU)
			continue;
		per_cpu[c]++;
		for (int g = 0; g < ngroups; g++)
			if ((group[g] >> c) & 1)
				in_group[g]++;
	}
	for (int c = 0; c < n && c < MAXCPU; c++)
		if (per_cpu[c])
			ktap_diag("CPU %d: %d wakeups", c, per_cpu[c]);
	ktap_diag("per LLC group: G0 %d, G1 (the wakee's, busy) %d, G2 (the waker's) %d; "
		  "discarded %d, timeouts %d", in_group[0], in_group[1], in_group[2],
		  w->f.discarded, w->f.timeouts);
	ktap_diag("llc_pct=%.1f sched=%s (wakeups on CPU %d, the idle CPU of the waker's cache)",
		  w->n ? 100.0 * per_cpu[target] / w->n : 0.0, sched_name(), target);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) || w->n < NWAKE / 2)
		ktap_bail("sleeper failed: status %#x, errno %d, %d wakeups", st, w->err, w->n);
	if (!rsdl) {
		ktap_check(w->n >= NWAKE / 2, "measured", "only %d wakeups", w->n);
		ktap_finish();
	}
	ktap_check(per_cpu[target] * 100 >= 95 * w->n, "waker_llc",
		   "%d of %d wakeups on CPU %d (%.1f%%), expected >= 95%%", per_cpu[target], w->n,
		   target, 100.0 * per_cpu[target] / w->n);
	ktap_finish();
}
