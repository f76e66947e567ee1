// SPDX-License-Identifier: GPL-2.0
/*
 * rsdl_rules - the rules of sched-rsdl.rst, one subtest each, on one CPU.
 *
 * Expected: the rule named at each subtest, with quota, E and the sleeper
 * bound from guest/lib/rsdl_spec.h; rr_interval is 6 ms (quota(0) =
 * quota(19) = 6 ms) unless said otherwise. A failure names the rule the
 * kernel broke. Each test_*() function says how its bound follows.
 *
 *  1. normal_wake_preempts_nice19 (rule 7): nice 0 waking beside a nice 19
 *     hog preempts at once.
 *  2. nice19_wake_waits (rule 7): nice 19 waking beside two nice 0 hogs
 *     waits while they run below its only slot.
 *  3. batch_never_wakeup_preempts (rule 11): SCHED_BATCH waits for the slot's
 *     end, SCHED_NORMAL does not.
 *  4. fork_split (rule 8): the child gets at most half of the parent's time
 *     left, at the parent's level and rotation.
 *  5. yield_to_expired (rule 9): a yielder gives up its rotation.
 *  6. nice_change_mid_rotation (rule 10): quota, row and slots follow nice.
 *  7. idle_only_level_39 (rule 11): SCHED_IDLE runs at level 39 only.
 *  8. fifo_preempts_rsdl: SCHED_FIFO runs above RSDL.
 *  9. sync_wake_waits_for_waker (rule 7): a task woken by a pipe write (a
 *     synchronous wakeup) runs when its waker blocks, one woken by an
 *     eventfd write preempts at once.
 * 10. sync_waker_runs_on (rules 7 and 3): a waker that goes on running after
 *     a synchronous wakeup delays its wakee by at most the rest of its slot.
 *
 * Wake latencies come from an absolute hrtimer sleep (timer slack 1 ns) with
 * random periods, so wakes fall at random points of the hogs' slots; the
 * same sampler on the idle CPU gives the baseline (base_p50/p90/p99/max).
 * Latency bounds are relative to it because the wake path itself costs what
 * the kernel build and the emulator make it (~0.5 ms at p50 for the lab's
 * debug kernel under icount).
 */
#include <sys/eventfd.h>
#include <sys/resource.h>
#include "util.h"

#define RR_MS 6
#define NSAMP 300
#define HALF_TICK (RSDL_TICK_NS / 2)

static int cpu;
static int64_t *lat;
static struct lat_stats base;

struct hogs {
	int n;
	pid_t pid[4];
	struct hog_slot *s;
};

static int hogs_start(struct hogs *h, int n, const struct task_cfg *c)
{
	h->n = n;
	h->s = shared_alloc(sizeof(*h->s) * n);
	for (int i = 0; i < n; i++)
		h->pid[i] = spawn_hog(&c[i], &h->s[i], HOG_COUNT, 60 * NSEC_PER_SEC);
	if (hogs_wait_ready(h->s, n, 5 * NSEC_PER_SEC))
		return -1;
	sleep_ms(100);
	return 0;
}

static void hogs_stop(struct hogs *h)
{
	for (int i = 0; i < h->n; i++)
		kill_child(h->pid[i]);
	munmap(h->s, sizeof(*h->s) * h->n);
}

static int sample(int policy, int nice_or_prio, int n, int64_t lo, int64_t hi, uint64_t seed,
		  struct lat_stats *st)
{
	struct task_cfg c = { .cpu = cpu, .policy = policy, .nice = nice_or_prio,
			      .prio = nice_or_prio };

	if (run_wake_sampler(&c, lat, n, lo, hi, 50 * NSEC_PER_USEC, seed, 60 * NSEC_PER_SEC))
		return -1;
	*st = lat_summary(lat, n);
	return 0;
}

static void print_lat(const char *what, const struct lat_stats *st)
{
	ktap_diag("%s: p50 %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us", what, US(st->p50),
		  US(st->p90), US(st->p99), US(st->max));
}

/*
 * normal_wake_preempts_nice19 (rule 7): a nice 0 task waking beside a nice 19
 * hog is queued at a level below the hog's only slot (20) and preempts at
 * once: p90 <= base_p90 + 0.5 ms. Without preemption it would wait for the
 * hog's slot to end: uniform over 6 ms, p90 ~5.4 ms.
 */
static void test_normal_preempts(void)
{
	struct task_cfg c = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 19 };
	struct hogs h;
	struct lat_stats st;

	if (hogs_start(&h, 1, &c) || sample(SCHED_OTHER, 0, NSAMP, 2 * NSEC_PER_MSEC,
					    8 * NSEC_PER_MSEC, 11, &st)) {
		ktap_fail("normal_wake_preempts_nice19", "hog or sampler failed");
		hogs_stop(&h);
		return;
	}
	hogs_stop(&h);
	print_lat("nice 0 waking beside a nice 19 hog", &st);
	ktap_diag("bound p90 <= base p90 %.1f us + 500 us", US(base.p90));
	ktap_check(st.p90 <= base.p90 + HALF_TICK, "normal_wake_preempts_nice19",
		   "p90 %.1f us over %.1f us", US(st.p90), US(base.p90 + HALF_TICK));
}

/*
 * nice19_wake_waits (rule 7), rr_interval 2: a nice 19 task (only slot: level
 * 20) waking beside two nice 0 hogs does not preempt them while they run at
 * levels below 20: in each rotation (sum E = 2 + 40 + 40 ms) the hogs first
 * use their 10 slots below level 20 (the stretch: 2 hogs x 10 x quota =
 * 40 ms), and the task's first wake in that stretch waits until it ends; in
 * the rest of the rotation it preempts at once. The criterion is by time, not
 * by the fraction of delayed wakes (a delayed wake waits tens of ms during
 * which no other sample is taken, undelayed ones follow each other): the
 * fraction of the window the task spent waiting in delayed wakes (latency >
 * base_p99 + 0.5 ms), sum of those latencies / window. Expected: (stretch -
 * the mean time the task still sleeps when the stretch begins, E[P^2] / 2E[P]
 * for periods P uniform in 15..30 ms) / sum E = (40 - 11.7) / 82 = 35 %;
 * asserted >= half of that (a kernel that let it preempt shows ~0 %). Also:
 * the longest delay is >= half of the stretch and within the sleeper bound
 * 2 x sum_{q != p} (E(q) + quota(q)).
 * This holds only while the task stays a sleeper, below its entitlement
 * (E(19) / sum E = 2.4 % of the CPU; a task at its entitlement expires and
 * waits whatever rule 7 does): hence the long periods and no work after a
 * wake (under emulation a wake still costs 0.3-0.5 ms), and its measured CPU
 * share must stay below 3/4 of the entitlement.
 */
#define N19_SAMP 200
#define N19_LO (15 * NSEC_PER_MSEC)
#define N19_HI (30 * NSEC_PER_MSEC)

static void test_nice19_waits(void)
{
	struct task_cfg c[2] = { { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 },
				 { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 } };
	struct task_cfg sc = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 19 };
	struct rsdl_task mix[3] = { { SCHED_OTHER, 19 }, { SCHED_OTHER, 0 }, { SCHED_OTHER, 0 } };
	uint64_t row0 = rsdl_row(0);
	int slot19 = rsdl_first_slot(rsdl_row(19), 0), below = 0, delayed = 0;
	int64_t bound = rsdl_sleeper_bound_ns(mix, 3, 0, 2), thr = base.p99 + HALF_TICK;
	int64_t q0 = rsdl_quota_ns(0, 2), sum_e = 0, stretch, waited = 0, t0, window;
	double lo = N19_LO, hi = N19_HI, residual, expect, frac, share, entitled;
	struct hogs h;
	struct lat_stats st;
	int r = rr_interval_set(2);

	for (int l = 0; l < slot19; l++)
		below += rsdl_level_usable(row0, l);
	for (int i = 0; i < 3; i++)
		sum_e += rsdl_entitlement_ns(mix[i].policy, mix[i].nice, 2);
	stretch = 2 * below * q0;	/* both hogs' slots below level 20 */
	/* mean residual sleep at a random instant, periods uniform in [lo, hi] */
	residual = (lo * lo + lo * hi + hi * hi) / 3 / (lo + hi);
	expect = (stretch - residual) / sum_e;
	entitled = (double)rsdl_entitlement_ns(SCHED_OTHER, 19, 2) / sum_e;
	if (r || hogs_start(&h, 2, c)) {
		ktap_fail("nice19_wake_waits", "rr_interval or hogs failed");
		if (!r)
			hogs_stop(&h);
		rr_interval_set(RR_MS);
		return;
	}
	/* the window: the sampler's whole run (its fork and exit make it a bit longer, which
	 * only lowers the measured fraction) */
	t0 = now_ns();
	r = run_wake_sampler(&sc, lat, N19_SAMP, N19_LO, N19_HI, 0, 12, 60 * NSEC_PER_SEC);
	window = now_ns() - t0;
	hogs_stop(&h);
	rr_interval_set(RR_MS);
	if (r) {
		ktap_fail("nice19_wake_waits", "sampler failed");
		return;
	}
	for (int i = 0; i < N19_SAMP; i++)
		if (lat[i] > thr) {
			delayed++;
			waited += lat[i];
		}
	st = lat_summary(lat, N19_SAMP);
	frac = (double)waited / window;
	share = (double)wake_sampler_cpu_ns / window;
	print_lat("nice 19 waking beside two nice 0 hogs (rr_interval 2)", &st);
	ktap_diag("nice 19 task's CPU share %.2f%% (%.1f ms), entitled %.2f%% (E(19) / sum E %.0f "
		  "ms), asserted < %.2f%%", 100 * share, MS(wake_sampler_cpu_ns), 100 * entitled,
		  MS(sum_e), 75 * entitled);
	ktap_diag("delayed > %.1f us: %d of %d wakes, waiting %.0f ms of a %.0f ms window = "
		  "%.1f%%; expected ~%.1f%% = (stretch %.0f ms (%d of %d nice 0 slots below level %d, "
		  "2 hogs) - mean residual sleep %.1f ms) / sum E %.0f ms; asserted >= %.1f%%",
		  US(thr), delayed, N19_SAMP, MS(waited), MS(window), 100 * frac, 100 * expect,
		  MS(stretch), below, rsdl_usable_slots(0), slot19, MS(residual), MS(sum_e),
		  50 * expect);
	ktap_diag("max delay %.2f ms: asserted >= %.1f ms (half the stretch) and <= sleeper bound "
		  "%.1f ms", MS(st.max), MS(stretch / 2), MS(bound));
	ktap_check(share < 0.75 * entitled && frac >= 0.5 * expect && st.max >= stretch / 2 &&
			   st.max <= bound,
		   "nice19_wake_waits",
		   "waited %.1f%% of the window (want >= %.1f%%), max %.2f ms (want %.1f..%.1f ms), "
		   "CPU share %.2f%% (want < %.2f%%)", 100 * frac, 50 * expect, MS(st.max),
		   MS(stretch / 2), MS(bound), 100 * share, 75 * entitled);
}

/*
 * batch_never_wakeup_preempts (rule 11): beside a nice 19 hog, a SCHED_BATCH
 * sleeper waits for the hog's slot to end (its latency is spread over
 * [0, quota]: expected p50 = quota / 2 = 3 ms; asserted p50 >= quota / 4 and
 * max <= quota + 1 tick of overrun + base_max, the worst wake-path cost seen
 * on the idle CPU), while the same sleeper as SCHED_NORMAL preempts
 * (p50 <= base_p50 + quota / 10).
 */
static void test_batch(void)
{
	struct task_cfg c = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 19 };
	int64_t q = rsdl_quota_ns(19, RR_MS);
	struct lat_stats sb, sn;
	struct hogs h;
	int bad;

	if (hogs_start(&h, 1, &c)) {
		ktap_fail("batch_never_wakeup_preempts", "hog failed");
		hogs_stop(&h);
		return;
	}
	bad = sample(SCHED_BATCH, 0, 200, 2 * NSEC_PER_MSEC, 13 * NSEC_PER_MSEC, 13, &sb) ||
	      sample(SCHED_OTHER, 0, 200, 2 * NSEC_PER_MSEC, 13 * NSEC_PER_MSEC, 13, &sn);
	hogs_stop(&h);
	if (bad) {
		ktap_fail("batch_never_wakeup_preempts", "sampler failed");
		return;
	}
	print_lat("SCHED_BATCH beside a nice 19 hog", &sb);
	print_lat("SCHED_NORMAL beside a nice 19 hog", &sn);
	ktap_diag("quota %.1f ms: BATCH p50 expected %.2f ms, asserted >= %.2f ms, max <= %.2f ms; "
		  "NORMAL p50 asserted <= %.1f us", MS(q), MS(q / 2), MS(q / 4),
		  MS(q + RSDL_TICK_NS + base.max), US(base.p50 + q / 10));
	ktap_check(sb.p50 >= q / 4 && sb.max <= q + RSDL_TICK_NS + base.max &&
			   sn.p50 <= base.p50 + q / 10,
		   "batch_never_wakeup_preempts",
		   "BATCH p50 %.2f ms max %.2f ms, NORMAL p50 %.1f us", MS(sb.p50), MS(sb.max),
		   US(sn.p50));
}

/*
 * fork_split (rule 8): 20 forks of a pinned nice -20 task P that has at least
 * 3/4 of a slot left (quota(-20) = 60 ms: the >= 22 ms P keeps after fork()
 * leave ample room for the two /proc reads even when the emulator charges a
 * jump of several ms). The child C must not have run when it is read (once it
 * runs it may exhaust its half and legally take its next slot): C is queued
 * at P's level behind P and does not preempt it (rule 7 needs a strictly
 * lower level), so P reads /proc/C/sched right after fork() without sleeping,
 * then its own. A sample is valid when C's se.sum_exec_runtime is 0 (C has
 * not run) and P is still in the slot it had before fork() (same level and
 * rotation): otherwise P's slot ended meanwhile, the sample is discarded and
 * counted; >= 15 of the 20 must be valid. In every valid one: C's time_slice
 * > 0 and <= half of P's read just before the fork, C + P after <= P before,
 * C's level == P's level and C's rotation == P's rotation.
 */
#define FORKS 20
#define FORKS_VALID 15

static void test_fork_split(void)
{
	struct ktap_sub s = { 0 };
	struct task_cfg pc = { .cpu = cpu, .policy = SCHED_OTHER, .nice = -20 };
	int64_t q = rsdl_quota_ns(pc.nice, RR_MS);
	pid_t parent = fork_child();
	int st;

	if (parent == 0) {
		/* the parent under test: a nice -20 task alone on the test CPU */
		static struct rsdl_fields me[FORKS], after[FORKS], child[FORKS];
		static int rc[FORKS], ra[FORKS];
		int fails = 0, valid = 0;

		if (task_cfg_apply(&pc))
			_exit(2);
		for (int i = 0; i < FORKS; i++) {
			pid_t c;
			int tries = 0;

			/* make sure most of a slot is left: burn until a fresh slot */
			for (;;) {
				if (rsdl_fields_read(getpid(), &me[i], NULL))
					_exit(2);
				if (me[i].time_slice >= 3 * q / 4 || ++tries > 50)
					break;
				burn_cpu_ns(me[i].time_slice > 0 ? me[i].time_slice + 50000 : 50000);
			}
			if (me[i].quota != q) {
				printf("# FAIL parent quota %lld, want %lld\n", me[i].quota,
				       (long long)q);
				fflush(stdout);
				_exit(2);
			}
			c = fork();
			if (c == 0) {
				pause();
				_exit(0);
			}
			if (c < 0)
				_exit(2);
			/* no sleeping until both are read: C waits behind us at our level */
			rc[i] = rsdl_fields_read(c, &child[i], NULL);
			ra[i] = rsdl_fields_read(getpid(), &after[i], NULL);
			kill(c, SIGKILL);
			waitpid(c, NULL, 0);
		}
		for (int i = 0; i < FORKS; i++) {
			struct rsdl_fields *m = &me[i], *a = &after[i], *ch = &child[i];
			const char *why = NULL;

			if (rc[i] || ra[i])
				_exit(2);
			if (ch->sum_exec != 0)
				why = "child has run";
			else if (a->level != m->level || a->rotation != m->rotation)
				why = "parent's slot ended";
			printf("# fork %2d: parent before %lld (level %lld, rotation %lld), after %lld "
			       "(level %lld); child %lld (level %lld, rotation %lld, ran %lld ns)%s%s\n",
			       i, m->time_slice, m->level, m->rotation, a->time_slice, a->level,
			       ch->time_slice, ch->level, ch->rotation, ch->sum_exec,
			       why ? ": discarded, " : "", why ? why : "");
			if (why)
				continue;
			valid++;
			if (!(ch->time_slice > 0 && ch->time_slice <= m->time_slice / 2 &&
			      ch->time_slice + a->time_slice <= m->time_slice &&
			      ch->level == m->level && ch->rotation == m->rotation)) {
				printf("# FAIL fork %d: child %lld vs parent before %lld (half %lld) / "
				       "after %lld, levels %lld / %lld, rotations %lld / %lld\n", i,
				       ch->time_slice, m->time_slice, m->time_slice / 2,
				       a->time_slice, ch->level, m->level, ch->rotation, m->rotation);
				fails++;
			}
		}
		printf("# %d of %d samples valid (want >= %d), %d discarded, %d failed\n", valid,
		       FORKS, FORKS_VALID, FORKS - valid, fails);
		fflush(stdout);
		_exit(fails ? 1 : valid < FORKS_VALID ? 3 : 0);
	}
	st = reap_child(parent);
	ktap_expect(&s, WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "%s (status %d)",
		    !WIFEXITED(st) ? "parent died" :
		    WEXITSTATUS(st) == 1 ? "fork split violated" :
		    WEXITSTATUS(st) == 2 ? "fields unreadable or fork failed" :
		    WEXITSTATUS(st) == 3 ? "too few valid samples" : "?",
		    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	ktap_sub_end(&s, "fork_split");
}

/*
 * yield_to_expired (rule 9): task A calls sched_yield() in a loop beside a
 * nice 0 hog B. A gives up its rotation each time, so it runs one loop pass
 * per rotation (E(B) = 120 ms): its CPU share must stay below 1 tick / E(B) =
 * 0.83 %, and >= 90 % of 100 samples of A's rsdl.array must read 1 (expired).
 */
static void test_yield(void)
{
	struct task_cfg c = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 };
	int64_t eb = rsdl_entitlement_ns(SCHED_OTHER, 0, RR_MS);
	double bound = (double)RSDL_TICK_NS / eb, share;
	long long r0, r1, arr;
	int expired = 0, samples = 0;
	struct hogs h;
	pid_t a;
	int64_t t0, t1;

	if (hogs_start(&h, 1, &c)) {
		ktap_fail("yield_to_expired", "hog failed");
		hogs_stop(&h);
		return;
	}
	a = fork_child();
	if (a == 0) {
		pin_self(cpu);
		for (;;)
			sched_yield();
	}
	sleep_ms(300);
	schedstat_read(a, &r0, NULL, NULL);
	t0 = now_ns();
	for (int i = 0; i < 100; i++) {
		sleep_ms(10);
		if (!sched_field(a, "rsdl.array", &arr)) {
			samples++;
			expired += arr == 1;
		}
	}
	schedstat_read(a, &r1, NULL, NULL);
	t1 = now_ns();
	kill_child(a);
	hogs_stop(&h);
	share = (double)(r1 - r0) / (t1 - t0);
	ktap_diag("yielder beside a nice 0 hog: %.3f%% of the CPU (bound %.2f%% = 1 tick / E(hog) "
		  "%.0f ms); rsdl.array = 1 in %d of %d samples (want >= 90)", 100 * share,
		  100 * bound, MS(eb), expired, samples);
	ktap_check(share <= bound && samples == 100 && expired >= 90, "yield_to_expired",
		   "share %.3f%%, expired in %d/%d samples", 100 * share, expired, samples);
}

/*
 * nice_change_mid_rotation (rule 10): a hog beside another hog is reniced
 * -10, 10, -20, 19, 5, 0 every 7 ms: rsdl.quota == quota(new nice) exactly,
 * rsdl.time_slice <= that quota, rsdl.usable_slots == usable_slots(new nice),
 * rsdl.level usable in the new row.
 */
static void test_nice_change(void)
{
	static const int seq[] = { -10, 10, -20, 19, 5, 0 };
	struct task_cfg c[2] = { { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 },
				 { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 } };
	struct ktap_sub s = { 0 };
	struct hogs h;

	if (hogs_start(&h, 2, c)) {
		ktap_fail("nice_change_mid_rotation", "hogs failed");
		hogs_stop(&h);
		return;
	}
	for (unsigned int i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		struct rsdl_fields f;
		int n = seq[i];
		int64_t q = rsdl_quota_ns(n, RR_MS);

		sleep_ms(7);
		setpriority(PRIO_PROCESS, h.pid[0], n);
		if (rsdl_fields_read(h.pid[0], &f, NULL)) {
			ktap_expect(&s, 0, "cannot read the fields");
			break;
		}
		ktap_diag("nice -> %3d: quota %lld (want %lld), time_slice %lld, usable_slots %lld "
			  "(want %d), level %lld, array %lld", n, f.quota, (long long)q, f.time_slice,
			  f.usable_slots, rsdl_usable_slots(n), f.level, f.array);
		ktap_expect(&s, f.quota == q, "nice %d: quota %lld, want %lld", n, f.quota,
			    (long long)q);
		ktap_expect(&s, f.time_slice <= q, "nice %d: time_slice %lld > quota %lld", n,
			    f.time_slice, (long long)q);
		ktap_expect(&s, f.usable_slots == rsdl_usable_slots(n),
			    "nice %d: usable_slots %lld, want %d", n, f.usable_slots,
			    rsdl_usable_slots(n));
		ktap_expect(&s, rsdl_level_usable(rsdl_row(n), f.level),
			    "nice %d: level %lld not usable in the new row", n, f.level);
	}
	hogs_stop(&h);
	ktap_sub_end(&s, "nice_change_mid_rotation");
}

/*
 * idle_only_level_39 (rule 11): a SCHED_IDLE hog beside a nice 0 hog reads
 * rsdl.level 39 in all 50 samples and rsdl.usable_slots 1.
 */
static void test_idle_level(void)
{
	struct task_cfg c[2] = { { .cpu = cpu, .policy = SCHED_IDLE, .nice = 0 },
				 { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 } };
	struct ktap_sub s = { 0 };
	int at39 = 0, n = 0;
	long long lvl, us = -1, hist_other = -1;
	struct hogs h;

	if (hogs_start(&h, 2, c)) {
		ktap_fail("idle_only_level_39", "hogs failed");
		hogs_stop(&h);
		return;
	}
	for (int i = 0; i < 50; i++) {
		sleep_ms(10);
		if (sched_field(h.pid[0], "rsdl.level", &lvl))
			continue;
		n++;
		if (lvl == RSDL_IDLE_LEVEL)
			at39++;
		else
			hist_other = lvl;
	}
	sched_field(h.pid[0], "rsdl.usable_slots", &us);
	hogs_stop(&h);
	ktap_diag("SCHED_IDLE hog: level 39 in %d of %d samples (other level seen: %lld), "
		  "usable_slots %lld (want 1)", at39, n, hist_other, us);
	ktap_expect(&s, n == 50 && at39 == n, "level 39 in %d of %d samples", at39, n);
	ktap_expect(&s, us == 1, "usable_slots %lld", us);
	ktap_sub_end(&s, "idle_only_level_39");
}

/*
 * fifo_preempts_rsdl (SCHED_FIFO runs above RSDL): a SCHED_FIFO sleeper
 * beside nice -20 and nice 0 hogs: p90 <= its idle-CPU baseline p90 + 0.5 ms
 * and max <= 10 ms (quota(-20) = 60 ms: one wake left behind an RSDL slot
 * shows up by far; see fifo_preempt.c for why the bounds are relative plus
 * one absolute).
 */
static void test_fifo(void)
{
	struct task_cfg c[2] = { { .cpu = cpu, .policy = SCHED_OTHER, .nice = -20 },
				 { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 } };
	struct lat_stats st, fb;
	struct hogs h;

	if (sample(SCHED_FIFO, 20, NSAMP, 1 * NSEC_PER_MSEC, 5 * NSEC_PER_MSEC, 15, &fb)) {
		ktap_fail("fifo_preempts_rsdl", "baseline sampler failed");
		return;
	}
	print_lat("baseline: SCHED_FIFO waking on the idle CPU", &fb);
	if (hogs_start(&h, 2, c) || sample(SCHED_FIFO, 20, NSAMP, 1 * NSEC_PER_MSEC,
					    5 * NSEC_PER_MSEC, 14, &st)) {
		ktap_fail("fifo_preempts_rsdl", "hogs or sampler failed");
		hogs_stop(&h);
		return;
	}
	hogs_stop(&h);
	print_lat("SCHED_FIFO waking beside nice -20 and nice 0 hogs", &st);
	ktap_diag("bounds: p90 <= %.1f us (baseline p90 + 500 us), max <= 10000 us",
		  US(fb.p90 + HALF_TICK));
	ktap_check(st.p90 <= fb.p90 + HALF_TICK && st.max <= 10 * NSEC_PER_MSEC,
		   "fifo_preempts_rsdl", "p90 %.1f us (bound %.1f), max %.1f us (bound 10000)",
		   US(st.p90), US(fb.p90 + HALF_TICK), US(st.max));
}

/*
 * The synchronous-wakeup rounds: W (nice 19: its only slot is level 20) and
 * S (nice 0, first slot below level 20, so rule 7 alone lets S preempt W)
 * on the test CPU. Each round both sleep for SYNC_IDLE, the CPU goes idle
 * and W's wake starts a new rotation with its slot full (rule 5). W then
 * notes t_wake and writes to S's pipe (a WF_SYNC wakeup) or eventfd (not
 * synchronous), runs on for @run_ns of wall time, notes t_block and blocks
 * reading S's answer; S notes t_run when its read returns and answers.
 */
#define SYNC_ROUNDS 100
#define SYNC_IDLE (10 * NSEC_PER_MSEC)

struct sync_round {
	int64_t t_wake, t_block, t_run;
};

static int sync_rounds(bool use_eventfd, int64_t run_ns, int n, struct sync_round *r)
{
	struct task_cfg cw = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 19 };
	struct task_cfg cs = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 };
	int req[2], ans[2], efd = -1, bad = 0;
	pid_t w, s;
	uint64_t v = 1;
	char c = 0;

	if (pipe(req) || pipe(ans))
		return -1;
	if (use_eventfd && (efd = eventfd(0, 0)) < 0)
		return -1;
	s = fork_child();
	if (s == 0) {
		if (task_cfg_apply(&cs))
			_exit(1);
		for (int i = 0; i < n; i++) {
			if ((use_eventfd ? read(efd, &v, 8) != 8 : read(req[0], &c, 1) != 1))
				_exit(2);
			r[i].t_run = now_ns();
			if (write(ans[1], &c, 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	w = fork_child();
	if (w == 0) {
		if (task_cfg_apply(&cw))
			_exit(1);
		for (int i = 0; i < n; i++) {
			sleep_ns(SYNC_IDLE);
			r[i].t_wake = now_ns();
			if ((use_eventfd ? write(efd, &v, 8) != 8 : write(req[1], &c, 1) != 1))
				_exit(2);
			while (now_ns() < r[i].t_wake + run_ns)
				;
			r[i].t_block = now_ns();
			if (read(ans[0], &c, 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	bad |= reap_child(w) != 0;
	bad |= reap_child(s) != 0;
	close(req[0]);
	close(req[1]);
	close(ans[0]);
	close(ans[1]);
	if (efd >= 0)
		close(efd);
	return bad ? -1 : 0;
}

/* Rounds in which S ran before W blocked; S's wake latencies into lat[] */
static int sync_early(const struct sync_round *r, int n)
{
	int early = 0;

	for (int i = 0; i < n; i++) {
		lat[i] = r[i].t_run - r[i].t_wake;
		early += r[i].t_run < r[i].t_block;
	}
	return early;
}

/*
 * sync_wake_waits_for_waker (rule 7): W runs SYNC_RUN = 2 ms after the
 * wakeup, about 2.5 ms of its 6 ms slot with the wake path, so its slot never
 * ends first. Pipe (synchronous): S runs after W blocks, t_run >= t_block,
 * in every round; asserted in >= 95 % of them (a round where some other task
 * preempts W is followed, rightly, by S: it is queued at the better level).
 * Eventfd (not synchronous): S preempts W at once, t_run < t_block in >= 95 %
 * of the rounds, with p90 latency <= base p90 + 0.5 ms as in subtest 1.
 */
#define SYNC_RUN (2 * NSEC_PER_MSEC)

static void test_sync_wake(void)
{
	struct sync_round *r = shared_alloc(sizeof(*r) * SYNC_ROUNDS);
	int need = SYNC_ROUNDS * 95 / 100, early_sync, early_efd;
	struct lat_stats ss, se;

	if (sync_rounds(false, SYNC_RUN, SYNC_ROUNDS, r)) {
		ktap_fail("sync_wake_waits_for_waker", "pipe rounds failed");
		goto out;
	}
	early_sync = sync_early(r, SYNC_ROUNDS);
	ss = lat_summary(lat, SYNC_ROUNDS);
	memset(r, 0, sizeof(*r) * SYNC_ROUNDS);
	if (sync_rounds(true, SYNC_RUN, SYNC_ROUNDS, r)) {
		ktap_fail("sync_wake_waits_for_waker", "eventfd rounds failed");
		goto out;
	}
	early_efd = sync_early(r, SYNC_ROUNDS);
	se = lat_summary(lat, SYNC_ROUNDS);
	print_lat("pipe (WF_SYNC): nice 0 woken by a nice 19 waker that runs 2 ms more", &ss);
	print_lat("eventfd (not sync): the same", &se);
	ktap_diag("pipe: S ran before W blocked in %d of %d rounds, expected 0, asserted <= %d",
		  early_sync, SYNC_ROUNDS, SYNC_ROUNDS - need);
	ktap_diag("eventfd: S ran before W blocked in %d of %d rounds, expected %d, asserted >= "
		  "%d; p90 %.1f us, asserted <= base p90 + 500 us = %.1f us", early_efd,
		  SYNC_ROUNDS, SYNC_ROUNDS, need, US(se.p90), US(base.p90 + HALF_TICK));
	ktap_check(SYNC_ROUNDS - early_sync >= need && early_efd >= need &&
			   se.p90 <= base.p90 + HALF_TICK,
		   "sync_wake_waits_for_waker",
		   "pipe: %d early rounds, eventfd: %d early rounds, p90 %.1f us", early_sync,
		   early_efd, US(se.p90));
out:
	munmap(r, sizeof(*r) * SYNC_ROUNDS);
}

/*
 * sync_waker_runs_on (rules 7 and 3), the hostile side: W wakes S through the
 * pipe and then runs on for 30 ms instead of blocking. S waits only for the
 * rest of W's slot (rule 3 ends it): latency <= quota(19) + 1 tick of
 * overrun + base max (the wake path). Expected about quota(19): the slot W
 * started at its wake, less what W ran before its write, plus up to a tick
 * of overrun and S's own wake path; asserted max within the bound, and
 * p50 >= quota / 2 (S did wait for the slot's end).
 */
#define RUNON_ROUNDS 50
#define RUNON_RUN (30 * NSEC_PER_MSEC)

static void test_sync_runs_on(void)
{
	struct sync_round *r = shared_alloc(sizeof(*r) * RUNON_ROUNDS);
	int64_t q = rsdl_quota_ns(19, RR_MS), bound = q + RSDL_TICK_NS + base.max;
	struct lat_stats st;
	int early;

	if (sync_rounds(false, RUNON_RUN, RUNON_ROUNDS, r)) {
		ktap_fail("sync_waker_runs_on", "pipe rounds failed");
		munmap(r, sizeof(*r) * RUNON_ROUNDS);
		return;
	}
	early = sync_early(r, RUNON_ROUNDS);
	munmap(r, sizeof(*r) * RUNON_ROUNDS);
	st = lat_summary(lat, RUNON_ROUNDS);
	print_lat("pipe (WF_SYNC): nice 0 woken by a nice 19 waker that runs on 30 ms", &st);
	ktap_diag("S ran before W blocked in %d of %d rounds (expected all: W's slot ends first); "
		  "latency expected about quota(19) = %.1f ms, asserted p50 >= %.1f ms and max <= "
		  "%.2f ms (quota + tick + base max)", early, RUNON_ROUNDS, MS(q), MS(q / 2),
		  MS(bound));
	ktap_check(st.p50 >= q / 2 && st.max <= bound, "sync_waker_runs_on",
		   "p50 %.2f ms (want >= %.1f), max %.2f ms (want <= %.2f)", MS(st.p50),
		   MS(q / 2), MS(st.max), MS(bound));
}

int main(void)
{
	cpu = test_cpu();
	ktap_plan("rsdl_rules", 10);
	ktap_watchdog(150);
	ktap_diag("scheduler: %s, %d CPUs online, test CPU %d", sched_name(), ncpus_online(), cpu);
	become_controller_or_bail();
	rr_interval_set_or_bail(RR_MS);
	lat = shared_alloc(sizeof(int64_t) * NSAMP);
	if (sample(SCHED_OTHER, 0, NSAMP, 2 * NSEC_PER_MSEC, 8 * NSEC_PER_MSEC, 10, &base))
		ktap_bail("baseline sampler failed");
	print_lat("baseline: nice 0 waking on the idle CPU", &base);
	test_normal_preempts();
	test_nice19_waits();
	test_batch();
	test_fork_split();
	test_yield();
	test_nice_change();
	test_idle_level();
	test_fifo();
	test_sync_wake();
	test_sync_runs_on();
	ktap_finish();
}
