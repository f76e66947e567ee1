// SPDX-License-Identifier: GPL-2.0
/*
 * wake_placement - a sleeping task woken while another CPU is idle runs within
 * 1 ms (issue 4: "-smp 4, report p99 beside EEVDF's"; suite.list: smp2, so it
 * also runs on the 2-CPU boots, where the setup is the same with one busy CPU).
 *
 * Setup: one nice-0 hog pinned to CPU 1; the other CPUs have nothing to run
 * (the controller, SCHED_FIFO on CPU 0, blocks in waitpid()). A nice-0 sleeper
 * with every CPU in its mask, timer slack 1 ns, then:
 *
 *  A. baseline: pinned to CPU 0 (idle), 300 x sleep until an absolute
 *     CLOCK_MONOTONIC target 1..3 ms ahead; latency = time read on wakeup -
 *     target. No placement decision: this is what the emulated machine costs
 *     (timer interrupt, wakeup of an idle vCPU, exit from idle) with the same
 *     hogs running on the other vCPUs.
 *  B. placement: 1000 x { move to the busy CPU 1 (affinity {1}, then every
 *     CPU again: it stays on 1), sleep as in A }. The timer fires on CPU 1,
 *     whose hog is running; the wakeup finds CPU 1 busy and the others idle. The
 *     latency is measured as in A; the CPU it woke on and its schedstat
 *     run_delay growth over the sleep (time queued before it ran, in the
 *     guest's own accounting) are recorded.
 *
 *  1. wake_p99: p99 of B's latency <= 1 ms (issue 4). p50/p99/max of A and B
 *     and of B's run_delay are printed, with a greppable
 *     "wake_p99_us=... sched=..." line.
 *  2. placed_on_idle_cpu: at least 95 % of B's wakeups ran on a CPU other than
 *     the busy CPU 1. Issue 4's placement rule: the previous CPU if idle, else
 *     an idle CPU sharing cache; here an idle CPU exists at every wakeup unless
 *     a kernel thread (kworker, the console) happens to run on all of them at
 *     that moment, which the 5 % leave room for. This one is a decision of the
 *     guest's scheduler only, so the host's load cannot fail it.
 *
 * Why one hog and not one per busy CPU: one host thread per vCPU, guest time
 * = host wall time, on a host with 2 cores shared with other work. With hogs
 * on CPUs 1..3 of a 4-vCPU guest the guest alone keeps 3 host threads busy on
 * 2 cores, and waking the idle vCPU waits for the host: measured there on a
 * loaded host, RSDL's baseline (no placement at all) had p50 1.4 ms, p99 24 ms.
 * The bound is about the scheduler's choice, so the test keeps the guest's
 * own demand on the host at one busy vCPU. Waking an idle vCPU needs its host
 * thread to be scheduled by the host; if A's p99 is itself above 1 ms, the
 * emulator cannot deliver 1 ms to any scheduler at that moment and the output
 * says so (the bound is not changed). run_delay starts at the enqueue, which
 * for a remote wakeup happens on the woken CPU, so it leaves out the IPI and
 * the vCPU's wakeup by the host.
 */
#include "smp.h"

#define NA 300
#define NB 1000
#define BOUND_NS NSEC_PER_MSEC
#define PHASE_B_MAX_NS (20 * NSEC_PER_SEC)

struct wp_shared {
	int64_t lat_a[NA], lat_b[NB], rd_b[NB];
	int cpu_a[NA], cpu_b[NB], from_b[NB];
	int na, nb, ready, err;
};

static struct wp_shared *w;
static int ncpu;

static long long run_delay_self(void)
{
	long long rd = -1;

	schedstat_read(getpid(), NULL, &rd, NULL);
	return rd;
}

static void sleeper(void *unused)
{
	uint64_t seed = 42;
	cpu_set_t all, one;
	int64_t endb;

	(void)unused;
	prctl(PR_SET_TIMERSLACK, 1UL);
	cpuset_online(&all);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		w->err = 1;
		_exit(1);
	}
	for (int i = 0; i < NA; i++) {
		int64_t target = now_ns() + lcg_range(&seed, NSEC_PER_MSEC, 3 * NSEC_PER_MSEC);

		sleep_until_ns(target);
		w->lat_a[i] = now_ns() - target;
		w->cpu_a[i] = sched_getcpu();
		w->na = i + 1;
	}
	endb = now_ns() + PHASE_B_MAX_NS;
	for (int i = 0; i < NB && now_ns() < endb; i++) {
		int k = 1;
		int64_t target;
		long long rd0, rd1;

		CPU_ZERO(&one);
		CPU_SET(k, &one);
		if (sched_setaffinity(0, sizeof(one), &one) ||
		    sched_setaffinity(0, sizeof(all), &all)) {
			w->err = 2;
			_exit(1);
		}
		w->from_b[i] = sched_getcpu();
		rd0 = run_delay_self();
		target = now_ns() + lcg_range(&seed, NSEC_PER_MSEC, 3 * NSEC_PER_MSEC);
		sleep_until_ns(target);
		w->lat_b[i] = now_ns() - target;
		w->cpu_b[i] = sched_getcpu();
		rd1 = run_delay_self();
		w->rd_b[i] = (rd0 >= 0 && rd1 >= 0) ? rd1 - rd0 : -1;
		w->nb = i + 1;
	}
	_exit(0);
}

static void print_stats(const char *what, int64_t *v, int n)
{
	struct lat_stats st = lat_summary(v, n);

	ktap_diag("%-34s n=%4d  p50 %7.1f us  p99 %7.1f us  max %8.1f us", what, n, US(st.p50),
		  US(st.p99), US(st.max));
}

int main(void)
{
	int gate[64], gs, st, on_idle = 0, not_moved = 0;
	struct spin_slot *h;
	struct spin_arg harg[64];
	pid_t sp;
	int64_t tmp[NB], p99a, p99b;

	ktap_plan("wake_placement", 2);
	ktap_watchdog(120);
	ncpu = ncpus_online();
	if (ncpu < 2 || ncpu > 64)
		ktap_bail("needs 2..64 online CPUs");
	ktap_diag("scheduler: %s, %d CPUs online; a hog on CPU 1, the other CPUs idle", sched_name(),
		  ncpu);
	become_controller_or_bail();
	w = shared_alloc(sizeof(*w));
	h = shared_alloc(sizeof(*h) * ncpu);
	for (int k = 1; k < 2; k++) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(k, &one);
		harg[k] = (struct spin_arg){ .slot = &h[k], .max_ns = 60 * NSEC_PER_SEC };
		spawn_gated(spin_body, &harg[k], &one, &gate[k]);
	}
	gate_open(&gate[1]);
	sleep_ms(100);
	sp = spawn_gated(sleeper, NULL, NULL, &gs);
	gate_open(&gs);
	st = reap_child(sp);
	h[1].stop = 1;
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) || w->nb < 100)
		ktap_bail("sleeper failed: status %#x, error %d, %d + %d wakeups", st, w->err, w->na,
			  w->nb);

	memcpy(tmp, w->lat_a, sizeof(int64_t) * w->na);
	print_stats("A baseline, sleeper on idle CPU 0:", tmp, w->na);
	p99a = percentile(tmp, w->na, 99);
	for (int i = 0; i < w->na; i++)
		not_moved += w->cpu_a[i] != 0;
	if (not_moved)
		ktap_diag("A: %d wakeups not on CPU 0 (pinned there!)", not_moved);
	not_moved = 0;
	memcpy(tmp, w->lat_b, sizeof(int64_t) * w->nb);
	print_stats("B placement, slept on a busy CPU:", tmp, w->nb);
	p99b = percentile(tmp, w->nb, 99);
	memcpy(tmp, w->rd_b, sizeof(int64_t) * w->nb);
	print_stats("B run_delay growth per wakeup:", tmp, w->nb);
	for (int i = 0; i < w->nb; i++) {
		on_idle += w->cpu_b[i] != 1;
		not_moved += w->from_b[i] != 1;
	}
	ktap_diag("B: %d of %d wakeups ran on an idle CPU (%.1f%%), %d on the busy CPU 1; "
		  "%d times the sleeper was not on CPU 1 before sleeping", on_idle, w->nb,
		  100.0 * on_idle / w->nb, w->nb - on_idle, not_moved);
	ktap_diag("wake_p99_us=%.1f baseline_p99_us=%.1f sched=%s cpus=%d", US(p99b), US(p99a),
		  sched_name(), ncpu);
	ktap_diag("p99 %.1f us, expected <= %.0f us", US(p99b), US(BOUND_NS));
	if (p99a > BOUND_NS)
		ktap_diag("note: the idle-CPU baseline's p99 (%.1f us) is itself above %.0f us: the "
			  "emulated machine (vCPU wakeups by the host) cannot deliver the bound now",
			  US(p99a), US(BOUND_NS));
	ktap_check(p99b <= BOUND_NS, "wake_p99", "p99 %.1f us > %.0f us (baseline p99 %.1f us)",
		   US(p99b), US(BOUND_NS), US(p99a));
	ktap_diag("%.1f%% of wakeups on an idle CPU, expected >= 95%%", 100.0 * on_idle / w->nb);
	ktap_check(on_idle * 100 >= 95 * w->nb, "placed_on_idle_cpu",
		   "%d of %d wakeups ran on an idle CPU (%.1f%%, expected >= 95%%)", on_idle, w->nb,
		   100.0 * on_idle / w->nb);
	ktap_finish();
}
