// SPDX-License-Identifier: GPL-2.0
/*
 * pinned_mask - tasks pinned to CPU subsets never run outside their mask, also
 * while their masks change under load (SMP placement and balancing; suite.list:
 * smp2).
 *
 * Expected: the core's affinity contract (sched-rsdl.rst, SMP: affinity
 * changes move tasks through the core) and Bounded wait for the progress
 * check. A failure means a task ran outside its mask, was not moved before
 * sched_setaffinity() returned, or got stuck where it may not run.
 *
 * 2N sampler tasks, each pinned (sched_setaffinity) to a subset of the N online
 * CPUs, plus N unpinned hogs as load that the balancer wants to spread. For
 * 4 s the controller (SCHED_FIFO, CPU 0) changes one sampler's mask every
 * 250/2N ms (each sampler gets a new mask every 250 ms, 16 times), cycling
 * through {0}, {N-1}, the lower and upper half, even and odd CPUs, {0, N-1}
 * and all but CPU 0.
 *
 * Each sampler calls sched_getcpu() on every pass of its loop (a few us) and
 * checks it against its current mask, published by the controller with a
 * sequence count: the controller makes the count odd, calls
 * sched_setaffinity(), stores the new mask once the call has returned, then
 * makes the count even. A sample counts only if the count was the same even
 * value before and after sched_getcpu(): the mask it is checked against was
 * in force (the call that set it had returned) during the whole sample.
 * Samples taken across a change are discarded (counted, printed).
 *
 *  1. never_outside_mask: no counted sample on a CPU outside the mask.
 *  2. moved_before_return: right after each sched_setaffinity() returned,
 *     sched_getaffinity() reads back the new mask and the task's CPU
 *     (/proc/<pid>/stat field 39, task_cpu()) is in it: the samplers never
 *     block, so they are running or queued, and the kernel moves both kinds
 *     before the call returns (affine_move_task).
 *  3. all_progress: every sampler counted samples after its last mask change
 *     and every hog progressed (nothing stuck where it may not run). Time
 *     allowed after the last change: the bounded wait for a nice-0 task
 *     with all 3N tasks on one CPU, (3N-1) x E(0) + 3N ticks (606 ms at
 *     N = 2, 1332 ms at N = 4 with rr_interval 6 ms): a moved sampler may
 *     wait for its CPU's rotation.
 */
#include "util.h"

#define RUN_NS (4 * NSEC_PER_SEC)
#define PERIOD_NS (250 * NSEC_PER_MSEC)
#define MAXT 64

struct pm_slot {
	volatile uint64_t seq;		/* odd while the controller changes the mask */
	volatile uint64_t mask;		/* CPU bits in force when seq is even */
	volatile uint64_t samples, discarded, violations, seen, samples_at_change;
	volatile int bad_cpu;
	volatile uint64_t bad_mask;
	volatile int stop;
	char pad[8];
};

static void sampler(void *a)
{
	struct pm_slot *s = a;
	int64_t end = now_ns() + RUN_NS + 20 * NSEC_PER_SEC;

	for (uint64_t n = 0;; n++) {
		uint64_t g1, g2, m;
		int c;

		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		g1 = __atomic_load_n(&s->seq, __ATOMIC_SEQ_CST);
		m = s->mask;
		c = sched_getcpu();
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		g2 = __atomic_load_n(&s->seq, __ATOMIC_SEQ_CST);
		if ((g1 & 1) || g1 != g2) {
			s->discarded++;
		} else {
			s->samples++;
			if (c >= 0 && c < 64)
				s->seen |= 1ULL << c;
			if (c < 0 || c >= 64 || !(m >> c & 1)) {
				s->violations++;
				s->bad_cpu = c;
				s->bad_mask = m;
			}
		}
		if (s->stop || ((n & 1023) == 0 && now_ns() > end))
			_exit(0);
	}
}

int main(void)
{
	int n = ncpus_online(), nt = 2 * n, nm = 0, gate[2 * MAXT], changes = 0;
	uint64_t masks[16], all;
	struct pm_slot *s;
	struct spin_slot *h;
	struct spin_arg harg[MAXT];
	pid_t pid[MAXT];
	int idx[MAXT];
	uint64_t hog0[MAXT];
	struct ktap_sub s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
	int64_t t0, step;
	char b1[64], b2[64];

	ktap_plan("pinned_mask", 3);
	ktap_watchdog(120);
	if (n < 2 || nt > MAXT)
		ktap_bail("needs 2..%d online CPUs", MAXT / 2);
	all = (n == 64) ? ~0ULL : (1ULL << n) - 1;
	{
		uint64_t cand[] = {
			1ULL,					/* {0} */
			1ULL << (n - 1),			/* {N-1} */
			(1ULL << (n / 2)) - 1,			/* lower half */
			all & ~((1ULL << (n / 2)) - 1),		/* upper half */
			all & 0x5555555555555555ULL,		/* even */
			all & 0xaaaaaaaaaaaaaaaaULL,		/* odd */
			1ULL | 1ULL << (n - 1),			/* {0, N-1} */
			all & ~1ULL,				/* all but 0 */
		};

		for (unsigned int i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
			int dup = 0;

			for (int j = 0; j < nm; j++)
				dup |= masks[j] == cand[i];
			if (cand[i] && !dup)
				masks[nm++] = cand[i];
		}
	}
	ktap_diag("scheduler: %s, %d CPUs online, %d pinned samplers + %d unpinned hogs, %d masks, "
		  "%.0f s", sched_name(), n, nt, n, nm, RUN_NS / 1e9);
	become_controller_or_bail();
	s = shared_alloc(sizeof(*s) * nt);
	h = shared_alloc(sizeof(*h) * n);
	for (int i = 0; i < nt; i++) {
		cpu_set_t set;

		idx[i] = i % nm;
		s[i].mask = masks[idx[i]];
		cpuset_from_bits(&set, s[i].mask);
		pid[i] = spawn_gated(sampler, &s[i], &set, &gate[i]);
	}
	for (int i = 0; i < n; i++) {
		harg[i] = (struct spin_arg){ .slot = &h[i], .max_ns = RUN_NS + 20 * NSEC_PER_SEC };
		spawn_gated(spin_body, &harg[i], NULL, &gate[nt + i]);
	}
	for (int i = 0; i < nt + n; i++)
		gate_open(&gate[i]);
	sleep_ms(50);
	for (int i = 0; i < n; i++)
		hog0[i] = h[i].iters;
	t0 = now_ns();
	step = PERIOD_NS / nt;
	for (int k = 0; now_ns() < t0 + RUN_NS; k++) {
		int i = k % nt, cpu = -1;
		uint64_t m;
		cpu_set_t set, back;
		char st = '?';

		sleep_until_ns(t0 + (k + 1) * step);
		idx[i] = (idx[i] + 1 + i % 3) % nm;
		m = masks[idx[i]];
		if (m == s[i].mask)
			m = masks[idx[i] = (idx[i] + 1) % nm];
		cpuset_from_bits(&set, m);
		__atomic_add_fetch(&s[i].seq, 1, __ATOMIC_SEQ_CST);
		if (sched_setaffinity(pid[i], sizeof(set), &set)) {
			ktap_expect(&s2, 0, "sched_setaffinity(sampler %d, %s): %s", i,
				    bits_str(m, b1, sizeof(b1)), strerror(errno));
			__atomic_add_fetch(&s[i].seq, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		proc_stat_fields(pid[i], &st, &cpu);
		s[i].mask = m;
		__atomic_add_fetch(&s[i].seq, 1, __ATOMIC_SEQ_CST);
		s[i].samples_at_change = s[i].samples;
		changes++;
		CPU_ZERO(&back);
		sched_getaffinity(pid[i], sizeof(back), &back);
		ktap_expect(&s2, cpuset_bits(&back) == m, "sampler %d: mask %s reads back as %s", i,
			    bits_str(m, b1, sizeof(b1)), bits_str(cpuset_bits(&back), b2, sizeof(b2)));
		ktap_expect(&s2, cpu >= 0 && cpu < 64 && (m >> cpu & 1),
			    "sampler %d on CPU %d (state %c) after sched_setaffinity(%s) returned", i,
			    cpu, st, bits_str(m, b1, sizeof(b1)));
	}
	{
		/*
		 * Every sampler must run under its last mask: wait the longest a nice-0
		 * task may wait with all 3N tasks on one CPU (sched-rsdl.rst, Bounded wait:
		 * sum of the others' E(0) + one tick per task), at least 300 ms.
		 */
		int rr = sched_is_rsdl() && rr_interval_get() > 0 ? rr_interval_get()
								  : RSDL_RR_DEFAULT_MS;
		int64_t grace = (int64_t)(3 * n - 1) * rsdl_entitlement_ns(SCHED_OTHER, 0, rr) +
				3 * n * NSEC_PER_MSEC;

		if (grace < 300 * NSEC_PER_MSEC)
			grace = 300 * NSEC_PER_MSEC;
		ktap_diag("last changes done; waiting %.0f ms = (3N-1) x E(0) + 3N ticks (rr_interval "
			  "%d ms) for every sampler to run under its last mask", MS(grace), rr);
		sleep_ns(grace);
	}
	ktap_diag("%d mask changes in %.1f s", changes, MS(now_ns() - t0) / 1e3);
	ktap_diag("sampler  mask now   samples/s  discarded  CPUs seen  violations");
	for (int i = 0; i < nt; i++) {
		double el = (now_ns() - t0 + 50 * NSEC_PER_MSEC) / 1e9;

		ktap_diag("%7d  %-8s  %9.0f  %9llu  %-9s  %llu", i, bits_str(s[i].mask, b1, sizeof(b1)),
			  s[i].samples / el, (unsigned long long)s[i].discarded,
			  bits_str(s[i].seen, b2, sizeof(b2)), (unsigned long long)s[i].violations);
		if (!ktap_expect(&s1, s[i].violations == 0,
				 "sampler %d: %llu samples outside its mask (last on CPU %d, mask %s)", i,
				 (unsigned long long)s[i].violations, s[i].bad_cpu,
				 bits_str(s[i].bad_mask, b1, sizeof(b1))))
			continue;
		ktap_expect(&s3, s[i].samples > s[i].samples_at_change,
			    "sampler %d made no progress under its last mask %s", i,
			    bits_str(s[i].mask, b1, sizeof(b1)));
	}
	for (int i = 0; i < n; i++)
		ktap_expect(&s3, h[i].iters > hog0[i], "unpinned hog %d made no progress", i);
	ktap_sub_end(&s1, "never_outside_mask");
	ktap_sub_end(&s2, "moved_before_return");
	ktap_sub_end(&s3, "all_progress");
	for (int i = 0; i < nt; i++)
		s[i].stop = 1;
	for (int i = 0; i < n; i++)
		h[i].stop = 1;
	ktap_finish();
}
