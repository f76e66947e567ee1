// SPDX-License-Identifier: GPL-2.0
/*
 * calibrate - measure the busy loop once per boot and write loops per ms to
 * /tmp/loops_per_ms (read by every other bench program).
 *
 * Measured on CPU 0 while a spinner keeps every other vCPU busy (see LOOPS_FILE in guest/lib/timing.h: under
 * -icount a vCPU is slower in guest time when the others are busy; the loaded
 * scenarios are the ones that matter). Best of 7 rounds of 200 ms. Also prints the
 * speed with the other vCPUs idle (information) and the progress ratio of the slowest
 * to the fastest vCPU while all spin (vcpu_balance: a value far below 1 means a vCPU
 * stalled, the lab's known -icount problem; the host retries such a boot).
 * calibrate -c: the same measurements, printed as "vcpucheck ...", nothing written.
 */
#include "util.h"

static double rate(uint64_t n)
{
	int64_t t0 = now_ns();

	burn_loops(n);
	return n / ((now_ns() - t0) / 1e6);
}

static double best_rate(uint64_t n, int rounds)
{
	double best = 0;

	for (int i = 0; i < rounds; i++) {
		double r = rate(n);

		if (r > best)
			best = r;
	}
	return best;
}

static void too_slow(int sig)
{
	(void)sig;
	printf("calibrate loops_per_ms=0 loops_per_ms_alone=0 cpus=%d vcpu_balance=0.000 timeout=1\n", ncpus_online());
	fflush(stdout);
	signal(SIGTERM, SIG_IGN);
	kill(0, SIGTERM);	/* the spinners */
	_exit(3);
}

int main(int argc, char **argv)
{
	int check = argc > 1 && !strcmp(argv[1], "-c");
	int n = ncpus_online();
	volatile uint64_t *cnt = shared_alloc(sizeof(uint64_t) * 64);
	pid_t pid[64];
	double alone, busy, lo = 1e18, hi = 0;
	uint64_t n200, c0[64];
	int64_t t0, t1;
	FILE *f;

	signal(SIGALRM, too_slow);
	alarm(60);	/* normally 4 s: a vCPU that makes no progress at all */
	setpgid(0, 0);
	if (pin_pid(0, 0))
		die("sched_setaffinity");
	rate(1000000);	/* warm up */
	n200 = (uint64_t)(rate(2000000) * 200);
	alone = best_rate(n200, 3);
	for (int c = 1; c < n && c < 64; c++) {
		pid[c] = fork();
		if (pid[c] == 0) {
			if (pin_pid(0, c))
				die("sched_setaffinity");
			for (;;) {
				burn_loops(100000);
				cnt[c]++;
			}
		}
	}
	usleep(100000);
	busy = best_rate(n200, 7);
	/* balance: every vCPU's progress over 1 s while all spin (CPU 0 counted here) */
	for (int c = 1; c < n; c++)
		c0[c] = cnt[c];
	t0 = now_ns();
	uint64_t mine = 0;
	while (now_ns() - t0 < NSEC_PER_SEC) {
		burn_loops(100000);
		mine++;
	}
	t1 = now_ns();
	for (int c = 0; c < n; c++) {
		double r = (c ? cnt[c] - c0[c] : mine) * 100000.0 / ((t1 - t0) / 1e6);

		if (r < lo)
			lo = r;
		if (r > hi)
			hi = r;
	}
	for (int c = 1; c < n; c++)
		kill(pid[c], SIGKILL);
	while (wait(NULL) > 0)
		;
	if (check) {
		printf("vcpucheck loops_per_ms=%.0f loops_per_ms_alone=%.0f cpus=%d vcpu_balance=%.3f\n",
		       busy, alone, n, hi > 0 ? lo / hi : 0);
		return 0;
	}
	f = fopen(LOOPS_FILE, "w");
	if (!f || fprintf(f, "%.0f\n", busy) < 0 || fclose(f))
		die(LOOPS_FILE);
	printf("calibrate loops_per_ms=%.0f loops_per_ms_alone=%.0f cpus=%d vcpu_balance=%.3f\n",
	       busy, alone, n, hi > 0 ? lo / hi : 0);
	return 0;
}
