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
#include <linux/futex.h>
#include "util.h"

#define NWAKE 200
#define MAXCPU 64
#define RUN_MAX_NS (60 * NSEC_PER_SEC)

struct wl_shared {
	volatile int fut;	/* 1: armed by the sleeper, 2: woken by the waker */
	volatile int stop;
	int cpu[NWAKE];
	int n, discarded, timeouts, err;
};

static struct wl_shared *w;
static uint64_t group[MAXCPU];	/* LLC groups as CPU bit masks, by lowest CPU */
static int ngroups;

static long futex(volatile int *uaddr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/* "1,3-5" -> bit mask of CPUs < MAXCPU */
static uint64_t cpulist_bits(const char *s)
{
	uint64_t m = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;

		if (end == s)
			break;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s)
				break;
		}
		for (long c = a; c <= b && c < MAXCPU; c++)
			if (c >= 0)
				m |= 1ULL << c;
		s = end;
		if (*s != ',')
			break;
		s++;
	}
	return m;
}

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
	uint64_t seed = 11;
	int64_t armed_at = 0, delay = 0, end = now_ns() + RUN_MAX_NS;

	(void)unused;
	while (!w->stop && now_ns() < end) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		if (__atomic_load_n(&w->fut, __ATOMIC_SEQ_CST) != 1) {
			armed_at = 0;
			continue;
		}
		int64_t t = now_ns();

		if (!armed_at) {
			armed_at = t;
			delay = lcg_range(&seed, NSEC_PER_MSEC, 3 * NSEC_PER_MSEC);
			continue;
		}
		if (t - armed_at < delay)
			continue;
		__atomic_store_n(&w->fut, 2, __ATOMIC_SEQ_CST);
		futex(&w->fut, FUTEX_WAKE, 1, NULL);
		armed_at = 0;
	}
	_exit(0);
}

/* Arm and wait; 0 when woken by the waker, -1 when discarded */
static int wait_once(void)
{
	struct timespec to = { .tv_sec = 2 };
	long r;

	__atomic_store_n(&w->fut, 1, __ATOMIC_SEQ_CST);
	r = futex(&w->fut, FUTEX_WAIT, 1, &to);
	if (r && errno == ETIMEDOUT) {
		w->timeouts++;
		__atomic_store_n(&w->fut, 0, __ATOMIC_SEQ_CST);
		return -1;
	}
	if (r || __atomic_load_n(&w->fut, __ATOMIC_SEQ_CST) != 2) {
		/* woken before it blocked, or a spurious return */
		while (__atomic_load_n(&w->fut, __ATOMIC_SEQ_CST) == 1)
			futex(&w->fut, FUTEX_WAIT, 1, &to);
		w->discarded++;
		return -1;
	}
	return 0;
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
		if (wait_once())
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
	w->stop = 1;
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
		  w->discarded, w->timeouts);
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
