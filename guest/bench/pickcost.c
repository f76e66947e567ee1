// SPDX-License-Identifier: GPL-2.0
/*
 * pickcost - scheduling cost as the number of tasks grows: N threads that mostly
 * sleep (-m sleep: each wakes once a second at its own phase and burns 20 us) or
 * spin (-m spin: busy loops counting 0.1 ms work units), and beside them a pipe
 * ping-pong between two processes (one round trip = two wakeups and two switches).
 *
 *   pickcost -n NAME -m sleep|spin -t N [-d seconds]
 *
 * The threads are created first (create_us_per_task: pthread_create cost), wait on a
 * condition variable, and start together 0.5 s after the last one exists.
 * Output: "pickcost name=... tasks=N pingpong_us=... (per round trip)
 * ctxsw_per_s=... (from /proc/stat) spin_work_pct=... (work the spinners did, % of
 * all CPUs; 100 - it is the CPU lost to scheduling, the ping-pong and the kernel)".
 */
#include <pthread.h>
#include "util.h"

static volatile int64_t t_go, t_end;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* every thread waits here until all exist and the start time is set */
static void wait_start(void)
{
	pthread_mutex_lock(&mu);
	while (!t_go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}
static double lpm;
static const char *mode = "sleep";
static volatile uint64_t *spin_units;

static void *worker(void *arg)
{
	long i = (long)arg;

	wait_start();
	if (!strcmp(mode, "spin")) {
		uint64_t unit = (uint64_t)(lpm * UNIT_MS);

		sleep_until_ns(t_go);
		while (now_ns() < t_end) {
			burn_loops(unit);
			__atomic_fetch_add(spin_units, 1, __ATOMIC_RELAXED);
		}
	} else {
		int64_t next = t_go + (i * 7919 % 1000) * NSEC_PER_MSEC;
		uint64_t w = (uint64_t)(lpm * 0.02);

		while (next < t_end) {
			sleep_until_ns(next);
			burn_loops(w);
			next += NSEC_PER_SEC;
		}
	}
	return NULL;
}

static long long ctxt(void)
{
	char line[256];
	long long v = 0;
	FILE *f = fopen("/proc/stat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %lld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	const char *name = "pickcost";
	int n = 10, secs = 5, opt, a[2], b[2];
	volatile int64_t *pp;
	pthread_attr_t at;
	pthread_t *th;
	pid_t p1, p2;

	while ((opt = getopt(argc, argv, "n:m:t:d:")) != -1) {
		switch (opt) {
		case 'n': name = optarg; break;
		case 'm': mode = optarg; break;
		case 't': n = atoi(optarg); break;
		case 'd': secs = atoi(optarg); break;
		default: return 2;
		}
	}
	lpm = loops_per_ms();
	spin_units = shared_alloc(64);
	pp = shared_alloc(64);
	if (pipe(a) || pipe(b))
		die("pipe");
	p1 = fork();
	if (p1 == 0) {
		char c = 0;

		while (!pp[2])
			usleep(1000);
		sleep_until_ns(pp[2]);
		for (;;) {
			if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
				exit(0);
			if (now_ns() < pp[3])
				pp[0]++;
		}
	}
	p2 = fork();
	if (p2 == 0) {
		char c;

		for (;;)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				exit(0);
	}
	th = calloc(n, sizeof(*th));
	int64_t c_start = now_ns();
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], &at, worker, (void *)i)) {
			fprintf(stderr, "error: pthread_create %ld of %d\n", i, n);
			return 1;
		}
	/* the tasks start together, once all of them exist, and run secs seconds */
	int64_t create = now_ns() - c_start;
	struct sched_param sp = { .sched_priority = 50 };
	sched_setscheduler(0, SCHED_FIFO, &sp);
	pthread_mutex_lock(&mu);
	t_end = now_ns() + 500 * NSEC_PER_MSEC + secs * NSEC_PER_SEC;
	pp[3] = t_end;
	t_go = pp[2] = t_end - secs * NSEC_PER_SEC;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	sleep_until_ns(t_go);
	long long c0 = ctxt();
	sleep_until_ns(t_end);
	long long c1 = ctxt();
	int64_t ops = pp[0];

	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	kill(p1, SIGKILL);
	kill(p2, SIGKILL);
	waitpid(p1, NULL, 0);
	waitpid(p2, NULL, 0);
	printf("pickcost name=%s sched=%s mode=%s tasks=%d secs=%d create_us_per_task=%.1f pingpong_ops=%lld "
	       "pingpong_us=%.2f ctxsw_per_s=%.0f spin_work_pct=%.2f\n",
	       name, sched_is_rsdl() ? "rsdl" : "eevdf", mode, n, secs, create / 1e3 / n, (long long)ops,
	       ops ? secs * 1e6 / ops : 0.0, (c1 - c0) / (double)secs,
	       strcmp(mode, "spin") ? 0.0 : 100.0 * *spin_units * UNIT_MS / (secs * 1e3 * ncpus_online()));
	return 0;
}
