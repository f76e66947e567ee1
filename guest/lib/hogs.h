/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hogs.h - CPU-bound children that publish their progress in shared memory,
 * and the wake-latency sampler.
 *  - spawn_hog(): a hog with its policy, nice and CPU set before it first runs
 *    (struct hog_slot: loop passes, CPU, gaps; the tests' hogs);
 *  - spawn_gated(): any body, with an affinity, started by gate_open() (the SMP
 *    tests), spin_loop() its hog body;
 *  - unit_hogs_*(): hogs counting calibrated work units (the bench programs);
 *  - run_wake_sampler(): absolute-timer sleeps, latency per wake;
 *  - futex_waker_loop(), futex_wait_woken(): a spinning hog that wakes a
 *    sleeper 1..3 ms after it armed a futex (the placement tests).
 */
#ifndef LAB_HOGS_H
#define LAB_HOGS_H

#include <linux/futex.h>
#include "stats.h"
#include "tasks.h"
#include "timing.h"

/* ---- hogs with a slot ---------------------------------------------------------- */

/*
 * A hog's shared slot, one cache line each. The hog runs a fixed loop and
 * publishes its progress; iterations are a scheduler-independent measure of
 * CPU time received (every hog runs the same loop at the same speed).
 */
struct hog_slot {
	volatile uint64_t iters;	/* loop passes */
	volatile int64_t last_ns;	/* CLOCK_MONOTONIC of the last pass */
	volatile int64_t cpu_ns;	/* CLOCK_THREAD_CPUTIME_ID, refreshed every 64 passes */
	volatile int cpu;		/* sched_getcpu() of the last sample (HOG_GETCPU) */
	volatile int ready;
	volatile uint64_t wrong_cpu;	/* samples on a CPU other than slot->want_cpu */
	volatile int want_cpu;
	volatile int stop;
	volatile int64_t cpu_change_ns;	/* HOG_GETCPU: when the sampled CPU last changed */
	/* HOG_GAP: gaps (> gap_ns between consecutive clock reads) inside [win_start, win_end] */
	volatile int64_t win_start, win_end;
	volatile int64_t max_gap, first_in_win, last_in_win, ngaps;
	char pad[24];
};

enum hog_kind {
	HOG_COUNT,	/* count loop passes */
	HOG_GETCPU,	/* also sample sched_getcpu() every pass */
	HOG_GAP,	/* also record the longest gap between two clock reads */
};

#define HOG_GAP_NS (50 * NSEC_PER_USEC)
#define HOG_INNER 256	/* inner spins per pass: a pass is a few microseconds */

static inline void hog_loop(struct hog_slot *s, enum hog_kind kind, int64_t max_ns)
{
	int64_t start = now_ns(), last = start;
	uint64_t n = 0;

	s->last_ns = start;
	for (;;) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		n++;
		if (kind == HOG_GETCPU) {
			int c = sched_getcpu();

			if (c != s->cpu)
				s->cpu_change_ns = now_ns();
			s->cpu = c;
			if (s->want_cpu >= 0 && c != s->want_cpu)
				s->wrong_cpu++;
		}
		if (kind == HOG_GAP || (n & 63) == 0) {
			int64_t t = now_ns();

			if (kind == HOG_GAP) {
				int64_t ws = s->win_start, we = s->win_end;

				if (ws && t >= ws && (!we || t <= we)) {
					if (!s->first_in_win)
						s->first_in_win = t;
					if (last >= ws && t - last > HOG_GAP_NS) {
						s->ngaps++;
						if (t - last > s->max_gap)
							s->max_gap = t - last;
					}
					s->last_in_win = t;
				}
			}
			last = t;
			s->last_ns = t;
			if ((n & 63) == 0) {
				s->cpu_ns = thread_cpu_ns();
				if (s->stop || (max_ns && t - start > max_ns))
					break;
			}
		}
		s->iters = n;
	}
	s->iters = n;
	_exit(0);
}

/*
 * Fork a hog: pinned/policy per @c, looping with @kind, stopping by itself
 * after @max_ns (0 = only when killed) so nothing outlives a broken test.
 *
 * The child blocks on a pipe until the parent has set its policy and its
 * affinity (sched_setattr/sched_setaffinity on the sleeping child), so it
 * first runs on its own CPU with its own policy: hogs never compete for the
 * parent's CPU while setting themselves up (a nice -20 sibling there would
 * delay the others' setup by up to seconds), and a nice 19 hog does not have
 * to win CPU time beside a nice -20 hog to renice itself. "ready" means
 * configured, not "has run": a low-weight hog may legitimately wait long for
 * its first slice, and its share is what the tests measure.
 * The parent waits (up to 300 ms) until the child does block on the pipe:
 * otherwise (1-CPU boots, where the SCHED_FIFO parent keeps the CPU) the child
 * has not run yet when it is reconfigured and pays its whole way back from
 * fork() (several ms of page faults under emulation) with the new policy: a
 * nice 19 hog beside nice -20 hogs at rr_interval 1 then needed seconds to
 * reach its loop. The limit keeps spawning quick where earlier hogs share the
 * parent's CPU (the child then finishes its way with its new policy).
 */
static inline pid_t spawn_hog(const struct task_cfg *c, struct hog_slot *s, enum hog_kind kind,
			      int64_t max_ns)
{
	int gate, r;
	pid_t pid;
	char go = 0;

	pid = fork_gated(&gate);
	if (pid == 0)
		hog_loop(s, kind, max_ns);
	if (c->policy == SCHED_FIFO || c->policy == SCHED_RR)
		r = set_policy(pid, c->policy, c->prio, 0);
	else
		r = set_policy(pid, c->policy, c->nice, 0);
	if (!r && c->cpu >= 0)
		r = pin_pid(pid, c->cpu);
	if (r) {
		ktap_diag("hog setup (%s, nice %d / prio %d, CPU %d) failed: %s",
			  policy_name(c->policy), c->nice, c->prio, c->cpu, strerror(-r));
		s->ready = -1;
		close(gate);
		return pid;
	}
	go = 'g';
	if (write(gate, &go, 1) != 1)
		s->ready = -1;
	else
		s->ready = 1;
	close(gate);
	return pid;
}

/* Wait until every slot is ready (1); returns 0, or -1 (setup failure/timeout). */
static inline int hogs_wait_ready(struct hog_slot *s, int n, int64_t timeout_ns)
{
	int64_t t0 = now_ns(), end = t0 + timeout_ns;

	for (;;) {
		int ok = 0;

		for (int i = 0; i < n; i++) {
			if (s[i].ready < 0)
				return -1;
			ok += s[i].ready == 1;
		}
		if (ok == n)
			return 0;
		if (now_ns() > end) {
			ktap_diag("hogs not ready after %.0f ms:", MS(now_ns() - t0));
			for (int i = 0; i < n; i++)
				ktap_diag("  slot %d: ready %d, %llu passes, last seen %.1f ms ago", i,
					  s[i].ready, (unsigned long long)s[i].iters,
					  s[i].last_ns ? MS(now_ns() - s[i].last_ns) : -1.0);
			for (int i = 0; i < ktap_nchildren; i++) {
				char path[64], buf[1024], *p;
				long long run = -1, wait = -1;

				snprintf(path, sizeof(path), "/proc/%d/stat", (int)ktap_children[i]);
				if (read_file(path, buf, sizeof(buf)) < 0)
					continue;
				p = strrchr(buf, ')');
				schedstat_read(ktap_children[i], &run, &wait, NULL);
				ktap_diag("  child %d: state %c, runtime %.1f ms, run delay %.1f ms",
					  (int)ktap_children[i], p ? p[2] : '?', MS(run), MS(wait));
			}
			return -1;
		}
		sleep_ms(1);
	}
}

/* ---- gated children and spinning hogs (SMP tests) ------------------------------- */

/*
 * A spinning hog's shared slot: it publishes its loop count, the CLOCK_MONOTONIC
 * of its last pass and the CPU of its last pass (sched_getcpu() every pass).
 */
struct spin_slot {
	volatile uint64_t iters;
	volatile int64_t last_ns;
	volatile int cpu;
	volatile int stop;
	char pad[64 - 24];
};

static inline void spin_loop(struct spin_slot *s, int64_t max_ns)
{
	int64_t start = now_ns();
	uint64_t n = 0;

	for (;;) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		int64_t t = now_ns();

		s->cpu = sched_getcpu();
		s->last_ns = t;
		s->iters = ++n;
		if (s->stop || t - start > max_ns)
			_exit(0);
	}
}

/*
 * Fork a child that blocks on a gate pipe until gate_open(); before that the
 * parent sets its affinity to @mask (NULL: all online CPUs) and leaves its
 * policy as inherited (a SCHED_FIFO reset-on-fork controller forks SCHED_NORMAL
 * nice 0 children). The child then runs @body(@arg) and must _exit().
 * Returns the pid; *gate = the write end to open it with.
 */
static inline pid_t spawn_gated(void (*body)(void *), void *arg, const cpu_set_t *mask, int *gate)
{
	cpu_set_t all;
	pid_t pid;
	int w;

	pid = fork_gated(&w);
	if (pid == 0) {
		body(arg);
		_exit(0);
	}
	if (!mask) {
		cpuset_online(&all);
		mask = &all;
	}
	if (sched_setaffinity(pid, sizeof(*mask), mask))
		ktap_bail("sched_setaffinity(%d): %s", (int)pid, strerror(errno));
	*gate = w;
	return pid;
}

static inline void gate_open(int *gate)
{
	char go = 'g';

	if (*gate < 0)
		return;
	if (write(*gate, &go, 1) != 1)
		ktap_bail("gate write: %s", strerror(errno));
	close(*gate);
	*gate = -1;
}

struct spin_arg {
	struct spin_slot *slot;
	int64_t max_ns;
};

static inline void spin_body(void *a)
{
	struct spin_arg *sa = a;

	spin_loop(sa->slot, sa->max_ns);
}

/* ---- unit hogs (bench programs): busy loops counting work units -------------- */

/*
 * Plain fork()ed children at their own nice, each adding one to its shared counter per
 * UNIT_MS of calibrated work (burn_loops(), see loops_per_ms()); no gate, no time limit.
 */
#define UNIT_MS 0.1

struct unit_hogs {
	int n;
	pid_t pid[64];
	volatile uint64_t *count;	/* shared: units done per hog */
};

/* Start @n hogs at nice @nice[i] (pinned to @cpu if cpu >= 0); @lpm: loops_per_ms(). */
static inline void unit_hogs_start(struct unit_hogs *h, int n, const int *nice, int cpu,
				   double lpm)
{
	uint64_t unit = (uint64_t)(lpm * UNIT_MS);

	h->n = n;
	h->count = shared_alloc(sizeof(uint64_t) * (n ? n : 1));
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			die("fork");
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (cpu >= 0 && pin_pid(0, cpu))
				die("sched_setaffinity");
			set_nice(nice[i]);
			for (;;) {
				burn_loops(unit);
				h->count[i]++;
			}
		}
		h->pid[i] = p;
	}
}

static inline void unit_hogs_snap(const struct unit_hogs *h, uint64_t *out)
{
	for (int i = 0; i < h->n; i++)
		out[i] = h->count[i];
}

static inline void unit_hogs_stop(struct unit_hogs *h)
{
	for (int i = 0; i < h->n; i++)
		kill(h->pid[i], SIGKILL);
	for (int i = 0; i < h->n; i++)
		waitpid(h->pid[i], NULL, 0);
}

/*
 * Sample the hogs once per second for @secs seconds. @share[i]: hog i's share of one CPU
 * over the whole window; @min1s: the smallest share any hog got in any 1 s window.
 */
static inline void unit_hogs_measure(const struct unit_hogs *h, int secs, double *share,
				     double *min1s)
{
	uint64_t first[64], prev[64], cur[64] = { 0 };
	int64_t t0 = now_ns(), tp = t0, t = t0;

	*min1s = 1e9;
	unit_hogs_snap(h, first);
	memcpy(prev, first, sizeof(prev));
	for (int s = 1; s <= secs; s++) {
		sleep_until_ns(t0 + s * NSEC_PER_SEC);
		unit_hogs_snap(h, cur);
		t = now_ns();
		for (int i = 0; i < h->n; i++) {
			double sh = (cur[i] - prev[i]) * UNIT_MS * NSEC_PER_MSEC / (double)(t - tp);

			if (sh < *min1s)
				*min1s = sh;
		}
		memcpy(prev, cur, sizeof(prev));
		tp = t;
	}
	for (int i = 0; i < h->n; i++)
		share[i] = (cur[i] - first[i]) * UNIT_MS * NSEC_PER_MSEC / (double)(t - t0);
	if (!h->n)
		*min1s = 0;
}

/* ---- the wake-latency sampler ----------------------------------------------------- */

/*
 * Wake-latency sampler (runs in its own child): sleeps @n times until an
 * absolute CLOCK_MONOTONIC target a random @period_lo..@period_hi ahead,
 * records (wake time - target) into @lat, and burns @work_ns of CPU after
 * each wake. Timer slack is 1 ns so slack does not count as latency.
 */
static inline void wake_sampler(const struct task_cfg *c, int64_t *lat, int n,
				int64_t period_lo, int64_t period_hi, int64_t work_ns,
				uint64_t seed, volatile int *ready)
{
	uint64_t s = seed;

	if (task_cfg_apply(c)) {
		*ready = -1;
		_exit(1);
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	*ready = 1;
	for (int i = 0; i < n; i++) {
		int64_t target = now_ns() + lcg_range(&s, period_lo, period_hi);
		struct timespec t = ns_ts(target);

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
		lat[i] = now_ns() - target;
		if (work_ns)
			burn_cpu_ns(work_ns);
	}
	_exit(0);
}

/* CPU time (user + system, ns) the last run_wake_sampler() child used */
static int64_t wake_sampler_cpu_ns;

/*
 * Run wake_sampler in a child with @c and wait for it. @lat must be shared
 * memory. Returns 0 or -1 (child failed / did not finish in @timeout_ns).
 * The child's CPU time is left in wake_sampler_cpu_ns.
 */
static inline int run_wake_sampler(const struct task_cfg *c, int64_t *lat, int n,
				   int64_t period_lo, int64_t period_hi, int64_t work_ns,
				   uint64_t seed, int64_t timeout_ns)
{
	volatile int *ready = shared_alloc(sizeof(int));
	int64_t end;
	pid_t pid = fork_child();
	int st;

	if (pid == 0)
		wake_sampler(c, lat, n, period_lo, period_hi, work_ns, seed, ready);
	end = now_ns() + timeout_ns;
	wake_sampler_cpu_ns = 0;
	for (;;) {
		struct rusage ru;
		pid_t r = wait4(pid, &st, WNOHANG, &ru);

		if (r == pid) {
			ktap_untrack_child(pid);
			wake_sampler_cpu_ns = rusage_ns(&ru);
			break;
		}
		if (now_ns() > end) {
			kill_child(pid);
			munmap((void *)ready, sizeof(int));
			return -1;
		}
		sleep_ms(5);
	}
	munmap((void *)ready, sizeof(int));
	return (WIFEXITED(st) && WEXITSTATUS(st) == 0) ? 0 : -1;
}

/* ---- a hog that wakes a sleeper by futex -------------------------------------- */

struct futex_wake {
	volatile int fut;		/* 1: armed by the sleeper, 2: woken by the hog */
	volatile int stop;
	volatile int64_t t_wake;	/* CLOCK_MONOTONIC just before the last wake */
	int discarded, timeouts;	/* the sleeper's waits that did not count */
};

static inline long lab_futex(volatile int *uaddr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * The hog's body: spins; 1..3 ms (from @seed) after the sleeper armed @f->fut,
 * wakes it with FUTEX_WAKE (a plain, not a sync, wakeup); until @f->stop or
 * @end_ns. Then _exit(0).
 */
static inline void futex_waker_loop(struct futex_wake *f, uint64_t seed, int64_t end_ns)
{
	int64_t armed_at = 0, delay = 0;

	while (!f->stop && now_ns() < end_ns) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		if (__atomic_load_n(&f->fut, __ATOMIC_SEQ_CST) != 1) {
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
		f->t_wake = now_ns();
		__atomic_store_n(&f->fut, 2, __ATOMIC_SEQ_CST);
		lab_futex(&f->fut, FUTEX_WAKE, 1, NULL);
		armed_at = 0;
	}
	_exit(0);
}

/*
 * The sleeper's side: arm, wait (2 s at most). Returns the latency (ns) from
 * the hog's clock before the wake to this one after the wait, or -1 when the
 * wait does not count (woken before it blocked, a spurious return, timeout).
 */
static inline int64_t futex_wait_woken(struct futex_wake *f)
{
	struct timespec to = { .tv_sec = 2 };
	long r;
	int64_t t;

	__atomic_store_n(&f->fut, 1, __ATOMIC_SEQ_CST);
	r = lab_futex(&f->fut, FUTEX_WAIT, 1, &to);
	t = now_ns();
	if (r && errno == ETIMEDOUT) {
		f->timeouts++;
		__atomic_store_n(&f->fut, 0, __ATOMIC_SEQ_CST);
		return -1;
	}
	if (r || __atomic_load_n(&f->fut, __ATOMIC_SEQ_CST) != 2) {
		/* EAGAIN: the hog woke it before it blocked; or a spurious return */
		while (__atomic_load_n(&f->fut, __ATOMIC_SEQ_CST) == 1)
			lab_futex(&f->fut, FUTEX_WAIT, 1, &to);
		f->discarded++;
		return -1;
	}
	return t - f->t_wake;
}

#endif /* LAB_HOGS_H */
