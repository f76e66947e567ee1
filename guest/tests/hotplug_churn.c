// SPDX-License-Identifier: GPL-2.0
/*
 * hotplug_churn - 200 offline/online cycles of CPUs 1..N-1 under a mixed load
 * (SMP placement and balancing, CPU hotplug; suite.list: smp2).
 *
 * Expected: sched-rsdl.rst, SMP (hotplug moves tasks through the core; a
 * moved task keeps its entitlement, rule 12) and Bounded wait for the
 * progress windows below. A failure means a transition failed, or a task was
 * stuck on a dead CPU, forgotten on a runqueue or killed by a wrong status
 * or byte. The host harness checks the console for splats (WARNING, BUG,
 * lockdep, RCU stall, hung task, ...); this program checks that every task
 * gets through.
 *
 * Load, all forked before the first cycle and started together:
 *   - N+1 unpinned hogs and one hog pinned to CPU N-1 (the kernel breaks its
 *     affinity when that CPU goes offline, select_fallback_rq());
 *   - 2 fork storms: each forks a child that spins a little and exits with
 *     status (k % 100), waits for it and checks that status, in a loop;
 *   - a pipe ping-pong pair: one byte back and forth, each side checks that it
 *     receives the value it expects;
 *   - a 1 ms sleeper (clock_nanosleep loop).
 * Each publishes a progress count in shared memory and exits 0 when told to
 * stop, non-zero on a wrong status or byte.
 *
 * One cycle = CPUs 1..N-1 taken offline one after the other, then brought
 * online in the reverse order (so every cycle passes through "CPU 0 alone").
 *
 *  1. hotplug_cycles: all 200 cycles' writes succeed (EBUSY/EAGAIN retried)
 *     and each CPU's online file reads back the written state; the mean and
 *     slowest transitions are printed. Cycles still running after 240 s fail
 *     this subtest (the suite kills a test at 300 s) rather than being
 *     dropped silently; -smp 4 takes 1200 transitions of 50-200 ms each
 *     under TCG with lockdep.
 *  2. progress_during_churn: every task's count grew in every window of at
 *     least 2 s during the cycles (nothing stuck on a dead CPU or forgotten on
 *     a runqueue). 2 s: with everything on CPU 0, RSDL's bounded wait for 9
 *     nice-0 tasks is 8 x 20 x 6 ms + 9 ticks < 1 s, EEVDF's wait is shorter;
 *     a window is closed at the first cycle boundary after 2 s, the last one
 *     (after cycle 200) no sooner than 2 s after it opened.
 *  3. tasks_finish: after the cycles every task exits with status 0 within 30 s
 *     of the stop request, with a non-zero count.
 *  4. cpus_back_online: every CPU is online at the end and a task pinned to
 *     each one runs there.
 */
#include "util.h"

#define CYCLES 200
#define WINDOW_MIN_NS (2 * NSEC_PER_SEC)
#define CYCLES_MAX_NS (240 * NSEC_PER_SEC)
#define MAXT 80

struct hc_task {
	volatile uint64_t count;
	volatile int stop;
	char pad[64 - 12];
};

static struct hc_task *tk;
static int nonline;
static int pp[2][2];

static const char *kind_of(int i, int nhog)
{
	if (i < nhog)
		return i == nhog - 1 ? "pinned hog" : "hog";
	i -= nhog;
	return i < 2 ? "fork storm" : i < 4 ? "ping-pong" : "sleeper";
}

static void all_online(void)
{
	char path[96];

	for (int c = 1; c < nonline; c++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", c);
		write_file(path, "1");
	}
}

static int set_online(int cpu, int on, int64_t *took)
{
	char path[96];
	int64_t t0 = now_ns();

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	for (int tries = 0; tries < 100; tries++) {
		ssize_t r = write_file(path, on ? "1" : "0");

		if (r >= 0) {
			*took = now_ns() - t0;
			return cpu_is_online(cpu) == on ? 0 : -EIO;
		}
		if (r != -EBUSY && r != -EAGAIN)
			return (int)r;
		sleep_ms(10);
	}
	return -EBUSY;
}

static void hog_body(void *a)
{
	struct hc_task *t = a;

	while (!t->stop) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		t->count++;
	}
	_exit(0);
}

static void fork_body(void *a)
{
	struct hc_task *t = a;

	for (uint64_t k = 0; !t->stop; k++) {
		int st;
		pid_t p = fork();

		if (p < 0) {
			sleep_ms(1);
			continue;
		}
		if (p == 0) {
			for (int i = 0; i < 2000; i++)
				__asm__ __volatile__("" ::: "memory");
			_exit((int)(k % 100));
		}
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != (int)(k % 100))
			_exit(2);
		t->count++;
	}
	_exit(0);
}

static void ping_body(void *a)
{
	struct hc_task *t = a;
	int side = t == &tk[MAXT - 1] ? 1 : 0;
	unsigned char v = 0, r;

	/* side 0 writes pp[0], reads pp[1]; side 1 the other way; each checks the value */
	for (;;) {
		if (side == 0) {
			if (t->stop)
				v = 0xff;
			if (write(pp[0][1], &v, 1) != 1)
				_exit(3);
			if (v == 0xff)
				_exit(0);
			if (read(pp[1][0], &r, 1) != 1 || r != (unsigned char)(v + 1))
				_exit(4);
			v = (unsigned char)((r + 1) % 0xfe);
		} else {
			if (read(pp[0][0], &r, 1) != 1)
				_exit(3);
			if (r == 0xff)
				_exit(0);
			if (r != v)
				_exit(4);
			r++;
			if (write(pp[1][1], &r, 1) != 1)
				_exit(3);
			v = (unsigned char)((r + 1) % 0xfe);
		}
		t->count++;
	}
}

static void sleep_body(void *a)
{
	struct hc_task *t = a;

	while (!t->stop) {
		sleep_ns(NSEC_PER_MSEC);
		t->count++;
	}
	_exit(0);
}

int main(void)
{
	int nhog, nt, gate[MAXT], ping_idx;
	pid_t pid[MAXT];
	uint64_t last[MAXT];
	int64_t t0, wstart, sum_off = 0, sum_on = 0, max_off = 0, max_on = 0, took;
	long n_off = 0, n_on = 0, windows = 0;
	struct ktap_sub s1 = { 0 }, s2 = { 0 }, s3 = { 0 }, s4 = { 0 };

	ktap_plan("hotplug_churn", 4);
	ktap_watchdog(295);
	nonline = ncpus_online();
	if (nonline < 2 || nonline > 32)
		ktap_bail("needs 2..32 online CPUs");
	for (int c = 1; c < nonline; c++)
		if (!cpu_is_online(c))
			ktap_bail("CPU %d is not online at start", c);
	ktap_on_exit(all_online);
	become_controller_or_bail();
	tk = shared_alloc(sizeof(*tk) * MAXT);
	if (pipe(pp[0]) || pipe(pp[1]))
		ktap_bail("pipe: %s", strerror(errno));

	nhog = nonline + 2;	/* N+1 unpinned + 1 pinned to CPU N-1 */
	nt = 0;
	for (int i = 0; i < nhog; i++) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(nonline - 1, &one);
		pid[nt] = spawn_gated(hog_body, &tk[nt], i == nhog - 1 ? &one : NULL, &gate[nt]);
		nt++;
	}
	for (int i = 0; i < 2; i++, nt++)
		pid[nt] = spawn_gated(fork_body, &tk[nt], NULL, &gate[nt]);
	ping_idx = nt;
	pid[nt] = spawn_gated(ping_body, &tk[nt], NULL, &gate[nt]);
	nt++;
	/* the other side uses the last slot (ping_body tells the sides apart by slot) */
	pid[nt] = spawn_gated(ping_body, &tk[MAXT - 1], NULL, &gate[nt]);
	nt++;
	pid[nt] = spawn_gated(sleep_body, &tk[nt], NULL, &gate[nt]);
	nt++;
	close(pp[0][0]);
	close(pp[0][1]);
	close(pp[1][0]);
	close(pp[1][1]);
	ktap_diag("scheduler: %s, %d CPUs online, %d cycles of CPUs 1..%d; load: %d hogs (one "
		  "pinned to CPU %d), 2 fork storms, a ping-pong pair, a 1 ms sleeper", sched_name(),
		  nonline, CYCLES, nonline - 1, nhog, nonline - 1);
	for (int i = 0; i < nt; i++)
		gate_open(&gate[i]);
	sleep_ms(100);

#define COUNT(i) ((i) == ping_idx + 1 ? tk[MAXT - 1].count : tk[i].count)
	for (int i = 0; i < nt; i++)
		last[i] = COUNT(i);
	t0 = wstart = now_ns();
	for (int cyc = 0; cyc < CYCLES; cyc++) {
		for (int c = 1; c < nonline; c++) {
			int r = set_online(c, 0, &took);

			if (!ktap_expect(&s1, r == 0, "cycle %d: CPU %d offline: %s", cyc, c, strerror(-r)))
				continue;
			n_off++;
			sum_off += took;
			if (took > max_off)
				max_off = took;
		}
		for (int c = nonline - 1; c >= 1; c--) {
			int r = set_online(c, 1, &took);

			if (!ktap_expect(&s1, r == 0, "cycle %d: CPU %d online: %s", cyc, c, strerror(-r)))
				continue;
			n_on++;
			sum_on += took;
			if (took > max_on)
				max_on = took;
		}
		if (s1.nfail > 10)
			break;
		if (now_ns() - t0 > CYCLES_MAX_NS && cyc < CYCLES - 1) {
			ktap_expect(&s1, 0, "only %d of %d cycles in %.0f s (the suite stops a test at "
				    "300 s)", cyc + 1, CYCLES, CYCLES_MAX_NS / 1e9);
			break;
		}
		if (now_ns() - wstart >= WINDOW_MIN_NS || cyc == CYCLES - 1) {
			/* The last window too is at least 2 s long: the bound needs it */
			if (now_ns() - wstart < WINDOW_MIN_NS)
				sleep_until_ns(wstart + WINDOW_MIN_NS);
			windows++;
			for (int i = 0; i < nt; i++) {
				uint64_t c = COUNT(i);

				ktap_expect(&s2, c > last[i],
					    "task %d (%s) made no progress in %.1f s up to cycle %d "
					    "(state %c)", i, kind_of(i, nhog), MS(now_ns() - wstart) / 1e3,
					    cyc, proc_state(pid[i]));
				last[i] = c;
			}
			wstart = now_ns();
		}
	}
	ktap_diag("%d cycles in %.1f s: %ld offline (mean %.1f ms, max %.1f ms), %ld online "
		  "(mean %.1f ms, max %.1f ms)", CYCLES, MS(now_ns() - t0) / 1e3, n_off,
		  n_off ? MS(sum_off) / n_off : 0.0, MS(max_off), n_on,
		  n_on ? MS(sum_on) / n_on : 0.0, MS(max_on));
	ktap_sub_end(&s1, "hotplug_cycles");
	ktap_diag("%ld progress windows of >= %.0f s", windows, WINDOW_MIN_NS / 1e9);
	ktap_sub_end(&s2, "progress_during_churn");

	all_online();
	for (int i = 0; i < MAXT; i++)
		tk[i].stop = 1;
	t0 = now_ns();
	ktap_diag("task  kind        count       exit");
	for (int i = 0; i < nt; i++) {
		int st = -1;
		pid_t r = 0;

		while (now_ns() - t0 < 30 * NSEC_PER_SEC) {
			r = waitpid(pid[i], &st, WNOHANG);
			if (r == pid[i]) {
				ktap_untrack_child(pid[i]);
				break;
			}
			sleep_ms(10);
		}
		ktap_diag("%4d  %-10s  %10llu  %s %d", i, kind_of(i, nhog),
			  (unsigned long long)COUNT(i), r != pid[i] ? "not exited, state" : "status",
			  r != pid[i] ? proc_state(pid[i]) : (WIFEXITED(st) ? WEXITSTATUS(st) : -1));
		ktap_expect(&s3, r == pid[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0 && COUNT(i) > 0,
			    "task %d (%s) did not finish cleanly", i, kind_of(i, nhog));
	}
	ktap_diag("all tasks reaped %.2f s after the stop request", MS(now_ns() - t0) / 1e3);
	ktap_sub_end(&s3, "tasks_finish");

	for (int c = 0; c < nonline; c++) {
		struct spin_slot *h = shared_alloc(sizeof(*h));
		struct spin_arg a = { .slot = h, .max_ns = 5 * NSEC_PER_SEC };
		cpu_set_t one;
		int g;
		pid_t p;

		if (!ktap_expect(&s4, cpu_is_online(c), "CPU %d is offline at the end", c))
			continue;
		h->cpu = -1;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		p = spawn_gated(spin_body, &a, &one, &g);
		gate_open(&g);
		for (int k = 0; k < 200 && h->iters < 10; k++)
			sleep_ms(5);
		ktap_expect(&s4, h->iters > 0 && h->cpu == c, "task pinned to CPU %d: on CPU %d, "
			    "%llu passes", c, h->cpu, (unsigned long long)h->iters);
		kill_child(p);
	}
	ktap_sub_end(&s4, "cpus_back_online");
	ktap_finish();
}
