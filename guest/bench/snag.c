// SPDX-License-Identifier: GPL-2.0
/*
 * snag - the "RSDL hits a snag" workload: an interactive
 * client, a server doing the client's heavy work, and niced CPU hogs.
 *
 *   snag -n NAME [-H hogs] [-N hog_nice] [-s server_nice] [-c client_nice]
 *        [-m steady|ramp|burst] [-d seconds] [-w warmup_ms] [-r]
 *
 * Client: wakes on an absolute CLOCK_MONOTONIC timer every 16.667 ms (TIMER_ABSTIME,
 * timer slack 1 ns), sends a request to the server over a pipe, waits for the reply,
 * then burns C = 1 ms of its own work. A frame is met when the client's work is done
 * before the next tick; a frame that overruns drops every tick it covers (counted as
 * missed); the next frame starts at the next future tick.
 * Server (separate process): reads a request, burns S ms, replies. S per tick k:
 * steady 2 ms; ramp ("eye candy") 1 -> 9 ms over 60 ticks (1 s); burst 1 ->
 * 2 x rr_interval (12 ms at the default 6 ms; the same work on EEVDF) over 60 ticks.
 * Hogs: H busy loops at nice N counting 0.1 ms work units.
 * All work is the calibrated busy loop (calibrate, once per boot).
 *
 * Output: one "snag name=... key=value..." summary line; with -r also one
 * "frame name=NAME i client_us server_us response_us frame_us met" line per frame.
 * Latencies: client wake = timer expiry -> client running; server wake = request
 * written -> server running; response = request written -> reply read by the client
 * (the server's wake latency + its work + any preemption in between); frame time =
 * tick -> client's work done.
 * Entitlements: share of one CPU a CPU-bound task at the client's / server's nice gets
 * beside H/ncpus hogs per CPU, by the running scheduler's own table.
 */
#include "util.h"

#define PERIOD_NS 16666667LL
#define CLIENT_MS 1.0

struct req {
	int64_t t_sent;
	double work_ms;
};

struct rep {
	int64_t lat;
};

struct frame {
	int64_t client, server, response, time;
	int met;
};

static const char *mode = "steady";
static int rr;

static double server_ms(int64_t k)
{
	int ph = (int)(k % 60);

	if (!strcmp(mode, "steady"))
		return 2.0;
	if (!strcmp(mode, "ramp"))
		return 1.0 + 8.0 * ph / 59.0;
	return 1.0 + (2.0 * rr - 1.0) * ph / 59.0;	/* burst */
}

static void xread(int fd, void *b, size_t n)
{
	if (read(fd, b, n) != (ssize_t)n)
		exit(0);
}

static void xwrite(int fd, const void *b, size_t n)
{
	if (write(fd, b, n) != (ssize_t)n)
		exit(0);
}

static void print_stats(const char *key, int64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	printf(" %s_p50_us=%.1f %s_p99_us=%.1f %s_max_us=%.1f", key, percentile_nearest_rank(v, n, 50) / 1e3, key,
	       percentile_nearest_rank(v, n, 99) / 1e3, key, n ? v[n - 1] / 1e3 : 0.0);
}

int main(int argc, char **argv)
{
	const char *name = "snag";
	int nc = ncpus_online(), H = 2 * nc, hnice = 5, snice = 0, cnice = 0, secs = 10, raw = 0;
	int warm_ms = 500, opt, rsdl = sched_is_rsdl();
	int to_srv[2], to_cli[2], hn[64];
	double lpm = loops_per_ms();
	struct unit_hogs h;
	pid_t srv, cli;

	while ((opt = getopt(argc, argv, "n:H:N:s:c:m:d:w:r")) != -1) {
		switch (opt) {
		case 'n': name = optarg; break;
		case 'H': H = atoi(optarg); break;
		case 'N': hnice = atoi(optarg); break;
		case 's': snice = atoi(optarg); break;
		case 'c': cnice = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'd': secs = atoi(optarg); break;
		case 'w': warm_ms = atoi(optarg); break;
		case 'r': raw = 1; break;
		default: fprintf(stderr, "usage: see the comment in snag.c\n"); return 2;
		}
	}
	if (H > 64 || (strcmp(mode, "steady") && strcmp(mode, "ramp") && strcmp(mode, "burst")))
		return 2;
	rr = rr_interval_or_default();

	int maxf = secs * 61 + 100;
	struct frame *fr = shared_alloc(sizeof(*fr) * maxf);
	volatile int64_t *sh = shared_alloc(sizeof(int64_t) * 16);
	/* sh: 0 frames(ticks in window) 1 met 2 handled 3 demanded_us 4 delivered_us
	 *     5 client cpu ns 6 server cpu ns 7 records 8 frames > 2 periods */
	int64_t t_start = now_ns() + 300 * NSEC_PER_MSEC + warm_ms * NSEC_PER_MSEC;
	int64_t t_end = t_start + secs * NSEC_PER_SEC;

	for (int i = 0; i < H; i++)
		hn[i] = hnice;
	unit_hogs_start(&h, H, hn, -1, lpm);

	if (pipe(to_srv) || pipe(to_cli))
		die("pipe");
	srv = fork();
	if (srv == 0) {
		struct req q;
		struct rep r;
		int64_t c0 = -1;

		prctl(PR_SET_TIMERSLACK, 1UL);
		set_nice(snice);
		for (;;) {
			xread(to_srv[0], &q, sizeof(q));
			r.lat = now_ns() - q.t_sent;
			if (q.t_sent >= t_start && c0 < 0)
				c0 = process_cpu_ns();
			burn_ms(lpm, q.work_ms);
			if (q.t_sent < t_end) {
				int64_t c = process_cpu_ns();

				if (c0 >= 0)
					sh[6] = c - c0;
			}
			xwrite(to_cli[1], &r, sizeof(r));
		}
	}
	cli = fork();
	if (cli == 0) {
		int64_t base = now_ns() + 300 * NSEC_PER_MSEC, k = 0, c0 = -1;

		prctl(PR_SET_TIMERSLACK, 1UL);
		set_nice(cnice);
		/* align the window start on a tick */
		t_start = base + ((t_start - base) / PERIOD_NS) * PERIOD_NS;
		for (;;) {
			int64_t tick = base + k * PERIOD_NS, woke, done;
			int in = tick >= t_start;
			struct req q;
			struct rep r;

			if (tick >= t_end)
				break;
			if (in && c0 < 0)
				c0 = process_cpu_ns();
			sleep_until_ns(tick);
			woke = now_ns();
			q.work_ms = server_ms(k);
			q.t_sent = now_ns();
			xwrite(to_srv[1], &q, sizeof(q));
			xread(to_cli[0], &r, sizeof(r));
			int64_t replied = now_ns();
			burn_ms(lpm, CLIENT_MS);
			done = now_ns();
			if (in && sh[7] < maxf) {
				struct frame *f = &fr[sh[7]++];

				f->client = woke - tick;
				f->server = r.lat;
				f->response = replied - q.t_sent;
				f->time = done - tick;
				f->met = done <= tick + PERIOD_NS;
				sh[1] += f->met;
				sh[2]++;
				sh[4] += (int64_t)((CLIENT_MS + q.work_ms) * 1000);
				sh[8] += f->time > 2 * PERIOD_NS;
			}
			/* every tick from this one up to the work's end belongs to this frame */
			do {
				if (base + k * PERIOD_NS >= t_start && base + k * PERIOD_NS < t_end) {
					sh[0]++;
					sh[3] += (int64_t)((CLIENT_MS + server_ms(k)) * 1000);
				}
				k++;
			} while (base + k * PERIOD_NS < done);
		}
		sh[5] = process_cpu_ns() - c0;
		exit(0);
	}

	/* controller: asleep but for one sample a second, so it may be SCHED_FIFO */
	struct sched_param sp = { .sched_priority = 50 };
	double share[64], min1s, hsum = 0, pair_cpu, window = secs;
	int n;

	sched_setscheduler(0, SCHED_FIFO, &sp);
	sleep_until_ns(t_start);
	unit_hogs_measure(&h, secs, share, &min1s);
	waitpid(cli, NULL, 0);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	unit_hogs_stop(&h);

	n = (int)sh[7];
	int64_t *v = malloc(sizeof(int64_t) * (n + 1));
	for (int i = 0; i < H; i++)
		hsum += share[i];
	pair_cpu = (sh[5] + sh[6]) / (window * NSEC_PER_SEC);
	printf("snag name=%s sched=%s rr_ms=%d cpus=%d mode=%s hogs=%d hog_nice=%d server_nice=%d "
	       "client_nice=%d secs=%d frames=%lld met=%lld frames_met_pct=%.2f long_frames=%lld",
	       name, rsdl ? "rsdl" : "eevdf", rr, nc, mode, H, hnice, snice, cnice, secs,
	       (long long)sh[0], (long long)sh[1], sh[0] ? 100.0 * sh[1] / sh[0] : 0.0,
	       (long long)sh[8]);
	for (int i = 0; i < n; i++)
		v[i] = fr[i].time;
	print_stats("frame", v, n);
	for (int i = 0; i < n; i++)
		v[i] = fr[i].client;
	print_stats("client_wake", v, n);
	for (int i = 0; i < n; i++)
		v[i] = fr[i].server;
	print_stats("server_wake", v, n);
	for (int i = 0; i < n; i++)
		v[i] = fr[i].response;
	print_stats("response", v, n);
	printf(" demanded_cpu_pct=%.2f delivered_cpu_pct=%.2f pair_cpu_pct=%.2f",
	       sh[3] / 1e3 / (window * 1e3) * 100, sh[4] / 1e3 / (window * 1e3) * 100,
	       pair_cpu * 100);
	printf(" client_entitled_pct=%.2f server_entitled_pct=%.2f",
	       H ? 100 * expected_share(rsdl, cnice, (H + nc - 1) / nc, hnice, rr) : 100.0,
	       H ? 100 * expected_share(rsdl, snice, (H + nc - 1) / nc, hnice, rr) : 100.0);
	printf(" hog_share_mean_pct=%.2f hog_fair_pct=%.2f hog_jain=%.4f hog_min1s_pct=%.2f",
	       H ? 100 * hsum / H : 0.0, H ? 100 * (nc - pair_cpu) / H : 0.0, H ? jain_index(share, H) : 1.0,
	       H ? 100 * min1s : 0.0);
	printf(" hog_shares_pct=");
	for (int i = 0; i < H; i++)
		printf("%s%.2f", i ? "," : "", 100 * share[i]);
	printf("\n");
	if (raw)
		for (int i = 0; i < n; i++)
			printf("frame name=%s %d %.1f %.1f %.1f %.1f %d\n", name, i, fr[i].client / 1e3,
			       fr[i].server / 1e3, fr[i].response / 1e3, fr[i].time / 1e3, fr[i].met);
	return 0;
}
