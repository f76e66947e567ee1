// SPDX-License-Identifier: GPL-2.0
/*
 * migrate_share - a task that moves between CPUs keeps its share (suite.list:
 * smp2, so it runs on the 2- and 4-CPU boots of both schedulers).
 *
 * Expected: sched-rsdl.rst rule 12 (a moved task keeps its time and takes
 * its rank on the destination: it gets no more there than the tasks it meets
 * at its rank) and the Moves and Share guarantees. C nice-0 busy loops pinned
 * one to each of the C online CPUs (hog i on CPU i) and one nice-0 "mover":
 *  - all-CPU share: C + 1 equal tasks on C CPUs' worth of time, C x E /
 *    ((C + 1) E) = C / (C + 1) of a CPU each (2/3 on 2 CPUs, 4/5 on 4),
 *    computed with rsdl_spec.h's Share (EEVDF: equal weights, the same);
 *  - per-CPU share: the mover always shares one CPU with one hog, E / 2E =
 *    1/2 of a CPU while there (Moves: served as that CPU's tasks are); the
 *    hogs then get 1 - 1 / (2C).
 * Rotations are per CPU, so the spec promises the mover its per-CPU share,
 * not the all-CPU one: it can be anywhere between, and neither scheduler
 * shares time across CPUs (EEVDF measured 0.44-0.50 on 2 CPUs).
 *
 * Subtests affinity_0.5ms, affinity_5ms, affinity_50ms: after every P (0.5, 5,
 * 50 ms) of its own CPU time (CLOCK_THREAD_CPUTIME_ID) the mover pins itself
 * (sched_setaffinity(0, ...), a one-CPU mask) to the next CPU, round robin
 * over 0..C-1, and counts its moves in shared memory. Asserted: each hog >=
 * the all-CPU share - 0.05 (the victim check: a mover takes no more from any
 * hog than an equal task that shares all CPUs) and the mover <= the all-CPU
 * share + 0.05 (the cheater check: moving gains nothing); at 5 and 50 ms also
 * the mover >= its per-CPU share - 0.05 (a move costs it nothing beyond the
 * arrival waits of rule 12c). At 0.5 ms that floor is printed and not
 * judged: there the arrival waits of rule 12c (up to the time-left
 * difference to the running task, plus a tick) are of the order of the
 * mover's run per visit, and RSDL measured 0.39-0.46 against 0.45.

 * Subtest wake_alternate: moves by wakeup, not by affinity. The mover may run
 * on every CPU; it burns 0.5 ms of its CPU time, then, on CPU c, raises the
 * token of hog (c + 1) % C in shared memory and blocks reading its pipe. That
 * hog, a busy loop polling its token, writes one byte to the pipe once the
 * mover sleeps (state S in /proc/<pid>/stat) and loops on. A pipe write
 * is a synchronous wakeup from a CPU whose only runnable task is the waker,
 * which both schedulers take as the place for the wakee (RSDL: select_task_rq,
 * "the waker's for a synchronous wakeup"; fair: wake_affine_idle): so most
 * wakeups move the mover to the waker's CPU (EEVDF less often: a sleeper
 * with negative lag stays queued, DELAY_DEQUEUE, and is woken in place).
 * (Wakers of their own, sleeping beside the hogs, would leave two tasks on
 * the waker's CPU and the mover on its previous one.) The mover counts its
 * wakeups (reads across which its voluntary context switches,
 * getrusage(RUSAGE_THREAD), grew; the others, a preempted read the byte met
 * before it slept, are counted apart) and those after which sched_getcpu()
 * differs from its CPU before the read (printed with the fraction). The
 * mover sleeps at each round trip and so is not CPU-bound: asserted are only
 * each hog >= expected - 0.05 (a mover takes no more than a fair task's share
 * from any hog) and the mover <= expected + 0.05 (it gains nothing by the
 * wakeups), and that it was woken in the window.
 *
 * Each subtest forks the C hogs and the mover blocked on gates (spawn_gated)
 * and releases them together; after SETTLE_NS the runtimes of all tasks are
 * read from /proc/<pid>/schedstat, again WINDOW_NS later, the controller
 * (SCHED_FIFO, CPU 0) asleep in between: share = runtime / window. The
 * mover's se.nr_migrations (/proc/<pid>/sched) is printed beside its own
 * count. Also printed for the affinity subtests: what Share per CPU alone
 * would give, the mover always beside one hog: E / 2E = 1/2 of a CPU for it,
 * 1 - 1 / 2C for a hog (a scheduler fair per CPU and neutral to moves).
 *
 * Tolerance: 5 points over 5 s, the spec's measurement slack (as no_cheating).
 * Emulation: SMP boots run one host thread per vCPU; host stalls inflate the
 * runtime of whatever a vCPU ran, about evenly over 5 s (sum of shares
 * printed: C minus what the controller and kworkers took).
 */
#include "util.h"

#define SETTLE_NS (500 * NSEC_PER_MSEC)
#define WINDOW_NS (5 * NSEC_PER_SEC)
#define WAKE_BURN_NS (500 * NSEC_PER_USEC)	/* wake_alternate: mover's CPU per round */
#define SLACK 0.05
#define MAXC 32
#define RUN_MAX_NS (SETTLE_NS + WINDOW_NS + 20 * NSEC_PER_SEC)	/* children stop by themselves */

struct mig_shared {
	volatile int stop;
	volatile int token[MAXC];	/* wake_alternate: 1 = hog i is to wake the mover */
	volatile uint64_t moves, fails;	/* affinity: moves done, failed calls */
	volatile uint64_t wakeups, changed, to_waker;	/* wake_alternate: wakeups, CPU changes */
	volatile uint64_t unblocked;	/* wake_alternate: reads that found the byte there */
	int fd;				/* wake_alternate: the mover's pipe, write end */
};

static struct mig_shared *sh;
static int ncpu;

struct mover_arg {
	int64_t period_ns;	/* affinity: CPU time between moves; 0: wake_alternate */
	int rfd;		/* wake_alternate: the mover's pipe, read end */
};

static inline void spin(void)
{
	for (int i = 0; i < HOG_INNER; i++)
		__asm__ __volatile__("" ::: "memory");
}

struct waker_arg {
	int me;		/* the hog's CPU */
	pid_t mover;
};

/*
 * wake_alternate's hog: spins; when its token is up and the mover is asleep (state S in
 * /proc/<mover>/stat), writes the byte that wakes it
 */
static void waking_hog(void *a)
{
	const struct waker_arg *w = a;
	int64_t start = now_ns();
	char path[64], st;
	int fd, c;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)w->mover);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	while (!sh->stop && now_ns() - start < RUN_MAX_NS) {
		spin();
		if (!__atomic_load_n(&sh->token[w->me], __ATOMIC_ACQUIRE))
			continue;
		if (fd >= 0 && (proc_stat_fields_fd(fd, &st, &c) || st != 'S'))
			continue;
		__atomic_store_n(&sh->token[w->me], 0, __ATOMIC_RELEASE);
		if (fd < 0 || write(sh->fd, "w", 1) != 1)
			__atomic_add_fetch(&sh->fails, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

/* Voluntary context switches of the calling thread */
static long nvcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nvcsw;
}

static void mover(void *a)
{
	const struct mover_arg *m = a;
	int64_t start = now_ns(), next;
	int cpu = 0;
	char b;

	while (!sh->stop && now_ns() - start < RUN_MAX_NS) {
		next = thread_cpu_ns() + (m->period_ns ? m->period_ns : WAKE_BURN_NS);
		while (thread_cpu_ns() < next)
			spin();
		if (m->period_ns) {
			cpu = (cpu + 1) % ncpu;
			if (pin_self(cpu))
				sh->fails++;
			else
				sh->moves++;
			continue;
		}
		int c = sched_getcpu(), t = (c + 1) % ncpu, c2;
		long v = nvcsw();

		__atomic_store_n(&sh->token[t], 1, __ATOMIC_RELEASE);
		while (read(m->rfd, &b, 1) != 1)
			if (errno != EINTR)
				_exit(1);
		c2 = sched_getcpu();
		if (nvcsw() == v) {	/* did not sleep: not woken */
			sh->unblocked++;
			continue;
		}
		sh->wakeups++;
		sh->changed += c2 != c;
		sh->to_waker += c2 == t;
	}
	_exit(0);
}

/* One subtest; @period_ns: the affinity period, 0 for wake_alternate */
static void run(const char *name, int64_t period_ns, double expected, int floor)
{
	int n = ncpu, nt = n + 1, gate[MAXC + 1], pfd[2] = { -1, -1 };
	pid_t pid[MAXC + 1];
	long long r0[MAXC + 1], r1[MAXC + 1], mig0, mig1;
	uint64_t mv0, mv1, wk0, wk1, ch0, ch1, tw0, tw1, ub0, ub1;
	struct spin_slot *slot = shared_alloc(sizeof(*slot) * n);
	struct spin_arg sarg[MAXC];
	struct waker_arg warg[MAXC];
	struct mover_arg marg = { .period_ns = period_ns };
	double x[MAXC + 1], sum = 0, lo = expected - SLACK, hi = expected + SLACK;
	double pm = expected_share(sched_is_rsdl(), 0, 1, 0, rr_interval_or_default());
	int64_t t0, t1;
	cpu_set_t set;
	struct ktap_sub s = { 0 };

	memset(sh, 0, sizeof(*sh));
	if (!period_ns) {
		if (pipe(pfd))
			ktap_bail("pipe: %s", strerror(errno));
		sh->fd = pfd[1];
		marg.rfd = pfd[0];
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pid[n] = spawn_gated(mover, &marg, period_ns ? &set : NULL, &gate[n]);
	for (int i = 0; i < n; i++) {
		CPU_ZERO(&set);
		CPU_SET(i, &set);
		sarg[i] = (struct spin_arg){ .slot = &slot[i], .max_ns = RUN_MAX_NS };
		warg[i] = (struct waker_arg){ .me = i, .mover = pid[n] };
		if (period_ns)
			pid[i] = spawn_gated(spin_body, &sarg[i], &set, &gate[i]);
		else
			pid[i] = spawn_gated(waking_hog, &warg[i], &set, &gate[i]);
	}
	for (int i = 0; i < nt; i++)
		gate_open(&gate[i]);
	sleep_ns(SETTLE_NS);

	t0 = now_ns();
	for (int i = 0; i < nt; i++)
		r0[i] = task_runtime_ns(pid[i]);
	mig0 = task_migrations(pid[n]);
	mv0 = sh->moves, wk0 = sh->wakeups, ch0 = sh->changed, tw0 = sh->to_waker;
	ub0 = sh->unblocked;
	t0 = (t0 + now_ns()) / 2;
	sleep_until_ns(t0 + WINDOW_NS);
	t1 = now_ns();
	for (int i = 0; i < nt; i++)
		r1[i] = task_runtime_ns(pid[i]);
	mig1 = task_migrations(pid[n]);
	mv1 = sh->moves, wk1 = sh->wakeups, ch1 = sh->changed, tw1 = sh->to_waker;
	ub1 = sh->unblocked;
	t1 = (t1 + now_ns()) / 2;
	sh->stop = 1;

	ktap_diag("%s: %s, %d CPUs, %d pinned nice-0 hogs and a nice-0 mover, window %.2f s",
		  name, sched_name(), n, n, (t1 - t0) / 1e9);
	if (period_ns)
		ktap_diag("%s: the mover pins itself to the next CPU after every %.1f ms of its CPU",
			  name, MS(period_ns));
	else
		ktap_diag("%s: the mover burns %.1f ms, then hog (CPU + 1) %% %d wakes it (pipe) "
			  "once it sleeps; asserted: hogs >= %.3f, mover <= %.3f", name,
			  MS(WAKE_BURN_NS), n, lo, hi);
	ktap_diag("task    share  all-CPU share  per-CPU share  allowed");
	for (int i = 0; i < nt; i++) {
		int mv = i == n;
		double own = mv ? pm : 1 - pm / n, flo = mv ? pm - SLACK : lo;
		char who[16], range[48];

		x[i] = (r0[i] < 0 || r1[i] < 0) ? -1 : (double)(r1[i] - r0[i]) / (t1 - t0);
		sum += x[i];
		snprintf(who, sizeof(who), mv ? "mover" : "hog %d", i);
		if (!mv)
			snprintf(range, sizeof(range), ">= %.3f", lo);
		else if (floor)
			snprintf(range, sizeof(range), "%.3f..%.3f", flo, hi);
		else
			snprintf(range, sizeof(range), "<= %.3f (floor %.3f not judged)", hi, flo);
		ktap_diag("%-7s %.3f  %.3f          %.3f          %s", who, x[i], expected,
			  period_ns ? own : 0.0, range);
		ktap_expect(&s, x[i] >= 0, "%s: no runtime in /proc/%d/schedstat", who, (int)pid[i]);
		if (!mv)
			ktap_expect(&s, x[i] >= lo, "%s share %.3f < %.3f (all-CPU share %.3f - %.2f)",
				    who, x[i], lo, expected, SLACK);
		if (mv && floor)
			ktap_expect(&s, x[i] >= flo, "mover share %.3f < %.3f (per-CPU share %.3f - "
				    "%.2f)", x[i], flo, pm, SLACK);
		if (mv)
			ktap_expect(&s, x[i] <= hi, "mover share %.3f > %.3f (all-CPU share %.3f + "
				    "%.2f)", x[i], hi, expected, SLACK);
	}
	ktap_diag("sum of shares %.3f (of %d CPUs)", sum, n);
	if (period_ns) {
		ktap_diag("Share per CPU alone (mover beside one hog, 1/%d of the time on each "
			  "CPU): mover %.3f, hog %.3f", n, pm, 1 - pm / n);
		ktap_diag("mover: %llu moves in the window (%.0f/s), %llu failed calls, "
			  "se.nr_migrations +%lld", (unsigned long long)(mv1 - mv0),
			  (mv1 - mv0) / ((t1 - t0) / 1e9), (unsigned long long)sh->fails,
			  mig1 - mig0);
		ktap_expect(&s, !sh->fails, "%llu sched_setaffinity calls failed",
			    (unsigned long long)sh->fails);
		ktap_expect(&s, mv1 > mv0, "the mover did not move in the window");
	} else {
		uint64_t w = wk1 - wk0;

		ktap_diag("mover: %llu wakeups in the window, %llu changed CPU (%.1f%%), %llu to "
			  "the waker's CPU, se.nr_migrations +%lld; %llu reads did not sleep, "
			  "%llu failed writes", (unsigned long long)w,
			  (unsigned long long)(ch1 - ch0), w ? 100.0 * (ch1 - ch0) / w : 0.0,
			  (unsigned long long)(tw1 - tw0), mig1 - mig0,
			  (unsigned long long)(ub1 - ub0), (unsigned long long)sh->fails);
		ktap_expect(&s, w > 0, "the mover was not woken in the window: nothing tested");
		ktap_expect(&s, !sh->fails, "%llu pipe writes failed", (unsigned long long)sh->fails);
	}
	{
		double hmin = 1e9, hmax = -1e9;
		char extra[64];

		for (int i = 0; i < n; i++) {
			hmin = x[i] < hmin ? x[i] : hmin;
			hmax = x[i] > hmax ? x[i] : hmax;
		}
		if (period_ns)
			snprintf(extra, sizeof(extra), "moves=%llu", (unsigned long long)(mv1 - mv0));
		else
			snprintf(extra, sizeof(extra), "wakeups=%llu changed_pct=%.1f",
				 (unsigned long long)(wk1 - wk0),
				 wk1 > wk0 ? 100.0 * (ch1 - ch0) / (wk1 - wk0) : 0.0);
		ktap_diag("migrate=%s sched=%s cpus=%d mover_share=%.3f hog_min=%.3f hog_max=%.3f "
			  "expected=%.3f lo=%.3f hi=%.3f %s migrations=%lld", name,
			  sched_is_rsdl() ? "rsdl" : "eevdf", n, x[n], hmin, hmax, expected, lo, hi,
			  extra, mig1 - mig0);
	}
	for (int i = 0; i < nt; i++)
		kill_child(pid[i]);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
	munmap(slot, sizeof(*slot) * n);
	ktap_sub_end(&s, name);
}

int main(void)
{
	static const struct {
		const char *name;
		int64_t period_ns;
		int floor;	/* the mover's per-CPU share is judged */
	} sub[] = {
		{ "affinity_0.5ms", 500 * NSEC_PER_USEC, 0 },
		{ "affinity_5ms", 5 * NSEC_PER_MSEC, 1 },
		{ "affinity_50ms", 50 * NSEC_PER_MSEC, 1 },
		{ "wake_alternate", 0, 0 },
	};
	int nsub = sizeof(sub) / sizeof(sub[0]), rsdl = sched_is_rsdl();
	double expected;

	ncpu = ncpus_online();
	ktap_plan("migrate_share", nsub);
	ktap_watchdog(30 * nsub);
	if (ncpu < 2 || ncpu > MAXC)
		ktap_bail("needs 2..%d online CPUs, %d online", MAXC, ncpu);
	/* C CPUs' worth shared by C + 1 equal tasks: C x Share of one of them */
	expected = ncpu * expected_share(rsdl, 0, ncpu, 0, rr_interval_or_default());
	ktap_diag("scheduler: %s, %d CPUs, rr_interval %d ms, expected share of each task "
		  "%d x E / (%d E) = %.3f of a CPU, allowed +- %.2f, window %.0f s",
		  sched_name(), ncpu, rr_interval_or_default(), ncpu, ncpu + 1, expected, SLACK,
		  WINDOW_NS / 1e9);
	become_controller_or_bail();
	sh = shared_alloc(sizeof(*sh));
	for (int i = 0; i < nsub; i++)
		run(sub[i].name, sub[i].period_ns, expected, sub[i].floor);
	ktap_finish();
}
