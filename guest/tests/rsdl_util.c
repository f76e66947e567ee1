// SPDX-License-Identifier: GPL-2.0
/*
 * rsdl_util - the utilisation RSDL feeds to cpufreq (schedutil), thermal and
 * energy code: one nice 0 hog on one CPU, then the hog stopped.
 *
 * Expected: sched-rsdl.rst, "What RSDL does on real hardware", CPU
 * frequency, thermal and energy: the time a CPU runs RSDL tasks is a PELT
 * average (as rt's avg_rt), added to the other classes' in
 * effective_cpu_util(); an idle CPU's signal is brought up to date every
 * 32 ms by a busy CPU, in the softirq its tick raises. A failure means
 * RSDL's running time is not accounted (the CPU looks idle to schedutil
 * and thermal), is not summed into the effective utilisation, or an idle
 * CPU keeps its old utilisation (and its frequency domain up).
 *
 * The bounds, from PELT (kernel/sched/pelt.c): time counts in periods of
 * P = 1024 us, and y^32 = 1/2, so the half-life is H = 32 periods =
 * 32.768 ms. A CPU that runs RSDL tasks all the time from u0 has
 *   u(t) = C - (C - u0) * 2^(-t / H)		(C = capacity, 1024 here)
 * so it reaches 0.9 C after
 *   t_rise = H * log2((C - u0) / (0.1 C))	(u0 = 0: H * log2 10 = 108.8 ms;
 *						 32 ms * log2 10 = 106.3 ms)
 * and a CPU that stops at u_stop and runs nothing falls below 0.1 C after
 *   t_decay = H * log2(u_stop / (0.1 C))	(u_stop = C: 108.8 ms)
 * The kernel recomputes util_avg only when a period ends (+ P), the busy
 * CPU's tick updates it (+ 1 tick), and this program reads the debugfs file
 * every SAMPLE_MS (+ SAMPLE_MS + the longest read). SMP boots run on
 * multi-threaded TCG, where the host deschedules a vCPU for milliseconds
 * unseen by the guest: that delays the sampler and the ticks (+ JITTER_MS,
 * 10 ms; a broken signal misses by far more: a doubled half-life by 109 ms,
 * no idle update never decays). The rise bound also lets
 * interrupts and RT kthreads take up to 3 % of the hog's CPU (t_rise with
 * C replaced by 0.97 C as the level the signal tends to). The decay bound
 * adds the idle CPU's update interval: LOAD_AVG_PERIOD (32) jiffies of the
 * blocked update plus the 4 ms (RSDL_BALANCE_MS) gate of the tick balance it
 * runs from. A nice 0 "ticker" hog on the control CPU keeps that CPU's tick
 * going throughout, as any busy CPU does.
 *
 *  1. util_fields (RSDL): every per-CPU record of /sys/kernel/debug/sched/rsdl
 *     has util_avg, cpu_util and capacity, with 0 <= util_avg <= capacity and
 *     0 <= cpu_util <= capacity. EEVDF: the hog CPU's root cfs_rq util_avg
 *     in /sys/kernel/debug/sched/debug parses.
 *  2. rise: the hog CPU's util_avg (RSDL) reaches 0.9 C within the bound.
 *     EEVDF: the same for the root cfs_rq's util_avg, printed beside the
 *     PELT expectation; passes when the sampling completed (a new fair task
 *     starts with an estimated utilisation, so the formula does not apply).
 *  3. cpu_util (RSDL only): at the first sample >= 0.9 C and at the end of
 *     the run, cpu_util (sched_cpu_util(), what schedutil and thermal read)
 *     >= min(util_avg, C): RSDL's utilisation is in the effective one.
 *  4. decay: after SIGSTOP to the hog, util_avg falls below 0.1 C within
 *     the bound. EEVDF: printed, passes when the sampling completed.
 */
#include <math.h>
#include <signal.h>
#include "util.h"

#define SAMPLE_MS 2
#define RUN_MS 400		/* the hog's run: u >= C * (1 - 2^(-400 / 32.768)) */
#define QUIET_MS 3000		/* longest wait for the hog CPU to start near 0 */
#define PELT_PERIOD_MS 1.024
#define PELT_HALF_MS (32 * PELT_PERIOD_MS)
#define TICK_MS (RSDL_TICK_NS / 1e6)
#define BLOCKED_MS (32 * TICK_MS)	/* LOAD_AVG_PERIOD jiffies */
#define BALANCE_MS 4.0			/* RSDL_BALANCE_MS */
#define STOLEN 0.03			/* interrupts, RT kthreads on the hog CPU */
#define JITTER_MS 10.0			/* host descheduling of vCPUs, unseen by the guest */
#define SCHED_DEBUG_PATH "/sys/kernel/debug/sched/debug"

struct sample {
	long long util, cpu_util, cap;
};

static int rsdl;
static double max_read_ms;

/* The per-CPU record of @cpu in RSDL's debugfs file: 0, or -1 if missing */
static int rsdl_sample(int cpu, struct sample *s)
{
	static char buf[1 << 16];
	char *line, *save;
	long long c;

	if (read_file(RSDL_DEBUGFS_PATH, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (kv_get(line, "cpu", &c, NULL, 0) || c != cpu ||
		    !kv_get(line, "level", NULL, NULL, 0))
			continue;
		if (kv_get(line, "util_avg", &s->util, NULL, 0) ||
		    kv_get(line, "cpu_util", &s->cpu_util, NULL, 0) ||
		    kv_get(line, "capacity", &s->cap, NULL, 0))
			return -1;
		return 0;
	}
	return -1;
}

/* util_avg of @cpu's root cfs_rq in sched/debug (EEVDF): 0, or -1 if missing */
static int eevdf_sample(int cpu, struct sample *s)
{
	static char buf[1 << 20];
	char head[32], *line, *save;
	int in = 0;

	if (read_file(SCHED_DEBUG_PATH, buf, sizeof(buf)) < 0)
		return -1;
	snprintf(head, sizeof(head), "cfs_rq[%d]:", cpu);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != ' ' && line[0] != '\t') {
			/* the root group is "cfs_rq[N]:/", or "cfs_rq[N]:" without groups */
			in = !strncmp(line, head, strlen(head)) &&
			     (!strcmp(line + strlen(head), "/") || !line[strlen(head)]);
			continue;
		}
		if (in) {
			char *p = line;

			while (*p == ' ' || *p == '\t')
				p++;
			if (!strncmp(p, ".util_avg", 9) && (p[9] == ' ' || p[9] == ':')) {
				p = strchr(p, ':');
				if (!p)
					return -1;
				s->util = strtoll(p + 1, NULL, 10);
				s->cpu_util = -1;
				s->cap = 1024;
				return 0;
			}
		}
	}
	return -1;
}

static int sample(int cpu, struct sample *s)
{
	int64_t t0 = now_ns();
	int r = rsdl ? rsdl_sample(cpu, s) : eevdf_sample(cpu, s);
	double ms = MS(now_ns() - t0);

	if (ms > max_read_ms)
		max_read_ms = ms;
	return r;
}

/* Time (ms after @t0) at which @cpu's utilisation first crosses 90 % / 10 % */
struct crossing {
	double at_ms;		/* -1: not seen */
	struct sample at;	/* the sample that crossed */
	struct sample last;
	int nsamples, errors;
};

static void watch(int cpu, int64_t t0, int64_t until, int rising, struct crossing *x)
{
	memset(x, 0, sizeof(*x));
	x->at_ms = -1;
	for (int64_t next = t0; now_ns() < until; next += SAMPLE_MS * NSEC_PER_MSEC) {
		struct sample s;
		int64_t t;

		sleep_until_ns(next);
		if (sample(cpu, &s)) {
			x->errors++;
			continue;
		}
		t = now_ns();
		x->nsamples++;
		x->last = s;
		if (x->nsamples % 25 == 1)
			ktap_diag("  %+7.1f ms: util_avg %lld cpu_util %lld", MS(t - t0), s.util,
				  s.cpu_util);
		if (x->at_ms < 0 && (rising ? s.util >= 0.9 * s.cap : s.util < 0.1 * s.cap)) {
			x->at_ms = MS(t - t0);
			x->at = s;
			ktap_diag("  %+7.1f ms: util_avg %lld cpu_util %lld (crossed %s)",
				  x->at_ms, s.util, s.cpu_util, rising ? "90 %" : "10 %");
			if (!rising)
				return;
		}
	}
}

static void check_fields(int n, int cpu, struct ktap_sub *s)
{
	struct sample x;

	if (!rsdl) {
		ktap_expect(s, !eevdf_sample(cpu, &x), "no cfs_rq[%d] .util_avg in %s", cpu,
			    SCHED_DEBUG_PATH);
		return;
	}
	for (int c = 0; c < n; c++) {
		if (!ktap_expect(s, !rsdl_sample(c, &x),
				 "CPU %d: no record with util_avg, cpu_util, capacity", c))
			continue;
		ktap_diag("CPU %d: util_avg %lld cpu_util %lld capacity %lld", c, x.util,
			  x.cpu_util, x.cap);
		ktap_expect(s, x.cap > 0 && x.util >= 0 && x.util <= x.cap,
			    "CPU %d: util_avg %lld outside 0..capacity %lld", c, x.util, x.cap);
		ktap_expect(s, x.cpu_util >= 0 && x.cpu_util <= x.cap,
			    "CPU %d: cpu_util %lld outside 0..capacity %lld", c, x.cpu_util, x.cap);
	}
}

/* t for u(t) = C - (C - u0) * 2^(-t / H) to reach @target, tending to @top */
static double pelt_rise_ms(double u0, double top, double target)
{
	if (u0 >= target)
		return 0;
	return PELT_HALF_MS * log2((top - u0) / (top - target));
}

/* t for u(t) = u_stop * 2^(-t / H) to fall below @target */
static double pelt_decay_ms(double u_stop, double target)
{
	if (u_stop < target)
		return 0;
	return PELT_HALF_MS * log2(u_stop / target);
}

int main(void)
{
	int cpu = test_cpu(), n = ncpus_online();
	struct task_cfg hc = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 };
	struct task_cfg tc = { .cpu = ctl_cpu(), .policy = SCHED_OTHER, .nice = 0 };
	struct hog_slot *h = shared_alloc(sizeof(*h) * 2);
	double cap, t_ideal, t_rise, rise_bound, t_decay, decay_bound;
	struct crossing up, down;
	struct ktap_sub s = { 0 };
	struct sample q = { 0 };
	int64_t t0, t_quiet;
	pid_t hog, ticker;

	rsdl = sched_is_rsdl();
	ktap_plan("rsdl_util", rsdl ? 4 : 3);
	ktap_watchdog(60);
	ktap_diag("scheduler: %s, %d CPUs online, hog on CPU %d, ticker on CPU %d",
		  sched_name(), n, cpu, ctl_cpu());
	if (cpu == ctl_cpu())
		ktap_bail("needs 2 CPUs: the hog's and a busy one whose tick decays it");
	become_controller_or_bail();

	check_fields(n, cpu, &s);
	ktap_sub_end(&s, "util_fields");
	if (s.nfail)
		ktap_bail("no utilisation to read");

	/* A busy CPU elsewhere, as on any loaded system: its tick decays idle CPUs */
	ticker = spawn_hog(&tc, &h[1], HOG_COUNT, 30 * NSEC_PER_SEC);

	/* Start from a quiet CPU: u0 near 0 */
	t_quiet = now_ns();
	for (;;) {
		if (sample(cpu, &q) || q.cap <= 0)
			ktap_bail("cannot read CPU %d's utilisation", cpu);
		if (q.util < 0.05 * q.cap || now_ns() - t_quiet > QUIET_MS * NSEC_PER_MSEC)
			break;
		sleep_ms(10);
	}
	cap = q.cap;
	ktap_diag("before the hog (after %.0f ms): util_avg %lld of capacity %.0f",
		  MS(now_ns() - t_quiet), q.util, cap);

	/* 2. rise */
	memset(&s, 0, sizeof(s));
	/* The hog is forked on this CPU and runs on its own once spawn_hog() returns */
	hog = spawn_hog(&hc, &h[0], HOG_COUNT, 30 * NSEC_PER_SEC);
	t0 = now_ns();
	watch(cpu, t0, t0 + RUN_MS * NSEC_PER_MSEC, 1, &up);
	t_ideal = pelt_rise_ms(q.util, cap, 0.9 * cap);
	t_rise = pelt_rise_ms(q.util, (1 - STOLEN) * cap, 0.9 * cap);
	rise_bound = t_rise + PELT_PERIOD_MS + TICK_MS + SAMPLE_MS + max_read_ms + JITTER_MS;
	ktap_diag("rise from u0 = %lld: 90 %% after %.1f ms measured; PELT: %.1f ms (all the CPU), "
		  "%.1f ms (%.0f %% of it), bound %.1f ms = %.1f + period %.3f + tick %.1f + "
		  "sample %d + longest read %.2f + jitter %.0f", q.util, up.at_ms, t_ideal, t_rise,
		  100 * (1 - STOLEN), rise_bound, t_rise, PELT_PERIOD_MS, TICK_MS, SAMPLE_MS,
		  max_read_ms, JITTER_MS);
	ktap_diag("hog: %llu passes, %.1f ms of CPU in the %d ms run; %d samples, %d read errors",
		  (unsigned long long)h[0].iters, MS(h[0].cpu_ns), RUN_MS, up.nsamples,
		  up.errors);
	ktap_expect(&s, up.nsamples >= 10 && !up.errors,
		    "%d samples, %d read errors", up.nsamples, up.errors);
	if (rsdl)
		ktap_expect(&s, up.at_ms >= 0 && up.at_ms <= rise_bound,
			    "util_avg reached 90 %% after %.1f ms (-1: never), bound %.1f ms",
			    up.at_ms, rise_bound);
	else
		ktap_diag("EEVDF root cfs_rq util_avg: %s after %.1f ms, last %lld (not asserted: "
			  "a new fair task starts with an estimated utilisation)",
			  up.at_ms >= 0 ? "90 %" : "never 90 %", up.at_ms, up.last.util);
	ktap_sub_end(&s, "rise");

	/* 3. the effective utilisation includes RSDL's */
	if (rsdl) {
		memset(&s, 0, sizeof(s));
		if (ktap_expect(&s, up.at_ms >= 0, "no sample reached 90 %%")) {
			ktap_diag("at 90 %%: util_avg %lld cpu_util %lld; at the end: util_avg %lld "
				  "cpu_util %lld", up.at.util, up.at.cpu_util, up.last.util,
				  up.last.cpu_util);
			ktap_expect(&s, up.at.cpu_util >= (up.at.util < cap ? up.at.util : cap),
				    "at 90 %%: cpu_util %lld < util_avg %lld", up.at.cpu_util,
				    up.at.util);
			ktap_expect(&s, up.last.cpu_util >= (up.last.util < cap ? up.last.util : cap),
				    "at the end: cpu_util %lld < util_avg %lld", up.last.cpu_util,
				    up.last.util);
		}
		ktap_sub_end(&s, "cpu_util");
	}

	/* 4. decay */
	memset(&s, 0, sizeof(s));
	kill(hog, SIGSTOP);
	t0 = now_ns();
	t_decay = pelt_decay_ms(up.last.util, 0.1 * cap);
	decay_bound = t_decay + PELT_PERIOD_MS + BLOCKED_MS + BALANCE_MS + TICK_MS + SAMPLE_MS +
		      max_read_ms + JITTER_MS;
	watch(cpu, t0, t0 + (int64_t)(3 * decay_bound) * NSEC_PER_MSEC, 0, &down);
	kill_child(hog);
	kill_child(ticker);
	ktap_diag("decay from u_stop = %lld: below 10 %% after %.1f ms measured; PELT: %.1f ms, "
		  "bound %.1f ms = %.1f + period %.3f + blocked update %.0f + balance gate %.0f + "
		  "tick %.1f + sample %d + longest read %.2f + jitter %.0f", up.last.util,
		  down.at_ms, t_decay, decay_bound, t_decay, PELT_PERIOD_MS, BLOCKED_MS, BALANCE_MS,
		  TICK_MS, SAMPLE_MS, max_read_ms, JITTER_MS);
	ktap_expect(&s, down.nsamples > 0 && !down.errors, "%d samples, %d read errors",
		    down.nsamples, down.errors);
	if (rsdl)
		ktap_expect(&s, down.at_ms >= 0 && down.at_ms <= decay_bound,
			    "util_avg below 10 %% after %.1f ms (-1: not within %.0f ms), bound "
			    "%.1f ms", down.at_ms, 3 * decay_bound, decay_bound);
	else
		ktap_diag("EEVDF root cfs_rq util_avg: %s after %.1f ms, last %lld (not asserted)",
			  down.at_ms >= 0 ? "below 10 %" : "not below 10 %", down.at_ms,
			  down.last.util);
	ktap_sub_end(&s, "decay");
	ktap_finish();
}
