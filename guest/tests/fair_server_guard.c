// SPDX-License-Identifier: GPL-2.0
/*
 * fair_server_guard - after its runtime or period is written, the fair
 * deadline server still guarantees normal tasks runtime/period of a CPU
 * against a SCHED_FIFO hog.
 *
 * Expected: sched-rsdl.rst, "Interaction with the rest of the kernel", RT
 * starvation: the fair deadline server serves RSDL tasks (EEVDF's fair tasks
 * on rsdl=off boots, same bounds, figures printed for comparison); share
 * R/P, bounds below. A failure means a write left the normal tasks without
 * the guard (0 %), or made the kernel warn.
 *
 * The server (debugfs /sys/kernel/debug/sched/fair_server/cpuN/{runtime,period},
 * ns; 6.12 default 50 ms / 1 s) serves the normal class: under RSDL it serves
 * RSDL tasks (rsdl_server_init()). A write to either file stops the server and
 * applies the new parameters (sched_fair_server_write()); the server must come
 * back for the normal tasks that are queued at that moment, or they lose the
 * guard until their CPU next runs out of normal tasks. So every write here is
 * made while the normal hog is queued on the CPU.
 *
 * Setup: this process is SCHED_FIFO 50 (become_controller()), so it wakes on
 * time and can always stop the hogs. RT throttling (sched_rt_runtime_us,
 * default 950000 of 1000000 us, which would also hand normal tasks 5 %) is
 * switched off (-1) for the test so that the fair server is the only guard:
 * a lost guard then shows as 0 %. It and the server's parameters are restored
 * at exit, also on failure or timeout. A nice-0 normal hog is pinned to the
 * test CPU; its loop rate is calibrated alone for 500 ms.
 *
 * Phases (each subtest): write the parameters, start a SCHED_FIFO 10 busy loop
 * pinned to the same CPU, wait P + 100 ms, then measure the normal hog's share
 * over W = 4 s (4 or 8 periods):
 *  1. written_runtime: runtime := 100 ms, period 1 s (10 %).
 *  2. written_period: period := 500 ms, runtime 150 ms (30 %).
 *  3. rewritten_original: the original values (50 ms / 1 s by default)
 *     written again, unchanged: the write path alone (5 %).
 *  4. no_kernel_warning: the kernel log has no more "WARNING:", "BUG:" or
 *     "cut here" lines than at the start (the host's console scan fails the
 *     boot for them too; this names the test that caused one). A write
 *     that stops a server which an earlier write left stopped underflows the
 *     deadline class's running bandwidth ("dl_rq->running_bw > old" in
 *     __sub_running_bw()).
 *  5. restored: the original runtime, period and sched_rt_runtime_us read back.
 * Not tested: a write while the CPU has no normal task queued. The server has
 * then often stopped itself already, and the write's dl_server_stop() warns
 * in the same way on stock 6.12 (EEVDF) too.
 *
 * Expected share: R/P. The server is a deferred server: once the FIFO hog
 * starves the normal class it waits for zero laxity (P - R after its period
 * starts), then runs R and from then on R at the start of each period P
 * (dl_server_start(), dl_server_timer() and the state diagram in
 * kernel/sched/deadline.c). Any window of W therefore holds at least
 * floor(W / P) whole budgets once that pattern has started, and at most
 * ceil(W / P) (one may be cut in two at the window's edges); the wait of
 * P + 100 ms before the window lets the first budget pass. Bounds: R/P - R/W
 * .. R/P + R/W, one period's budget over the window either way (the phase of
 * the window, and the first budget's deferral if it ran late). Other normal
 * tasks of the guest (kworkers, the suite's output pipe) are served from the
 * same budget; they are idle here, so they are not allowed for.
 * The share is asserted by runtime (/proc/PID/schedstat) and, where the
 * guest's clock is exact (lab.clock=icount), also by loop count against the
 * calibrated rate.
 */
#include <limits.h>
#include "util.h"

#define WINDOW_NS (4 * NSEC_PER_SEC)
#define NPHASE 3

static int cpu;
static char rt_path[] = "/proc/sys/kernel/sched_rt_runtime_us";
static long long rt_saved = LLONG_MIN;
static long long r_saved = -1, p_saved = -1;

static void fs_path(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "/sys/kernel/debug/sched/fair_server/cpu%d/%s", cpu, what);
}

static int fs_get(long long *r, long long *p)
{
	char path[128];

	fs_path(path, sizeof(path), "runtime");
	if (read_ll(path, r))
		return -1;
	fs_path(path, sizeof(path), "period");
	return read_ll(path, p) ? -1 : 0;
}

static int fs_write(const char *what, long long v)
{
	char path[128], buf[32];
	ssize_t r;

	fs_path(path, sizeof(path), what);
	snprintf(buf, sizeof(buf), "%lld\n", v);
	r = write_file(path, buf);
	if (r != (ssize_t)strlen(buf)) {
		ktap_diag("write %lld to %s: %s", v, path, r < 0 ? strerror((int)-r) : "short");
		return -1;
	}
	return 0;
}

/*
 * Set runtime @r and period @p, always writing both files (each write takes the
 * stop/apply/restart path even when the value is unchanged). runtime <= period
 * must hold after every write: the runtime goes down first where it shrinks.
 */
static int fs_set(long long r, long long p)
{
	long long r0, p0;

	if (fs_get(&r0, &p0))
		return -1;
	if (fs_write("runtime", r < r0 ? r : r0) || fs_write("period", p) ||
	    fs_write("runtime", r))
		return -1;
	return fs_get(&r0, &p0) || r0 != r || p0 != p ? -1 : 0;
}

static void restore(void)
{
	char buf[32];

	if (r_saved > 0 && p_saved > 0)
		fs_set(r_saved, p_saved);
	if (rt_saved != LLONG_MIN) {
		snprintf(buf, sizeof(buf), "%lld\n", rt_saved);
		write_file(rt_path, buf);
	}
}

static char klog[1 << 20];

/* Lines of the kernel log that report a warning or bug, or -1. */
static int klog_warnings(void)
{
	static const char *const keys[] = { "WARNING:", "BUG:", "cut here" };
	int count = 0;

	if (klog_read(klog, sizeof(klog)) < 0)
		return -1;
	for (unsigned int i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		for (const char *p = strstr(klog, keys[i]); p; p = strstr(p + 1, keys[i]))
			count++;
	return count;
}

struct phase {
	const char *name;
	long long r, p;	/* ns; 0 = the original values */
};

/* Write the phase's parameters; 0, or -1 after reporting the phase failed. */
static int phase_write(const struct phase *ph)
{
	long long r = ph->r ? ph->r : r_saved, p = ph->p ? ph->p : p_saved;

	if (fs_set(r, p)) {
		ktap_fail(ph->name, "cannot set runtime %lld ns / period %lld ns", r, p);
		return -1;
	}
	return 0;
}

/* Start the FIFO hog beside normal hog @n and measure the phase written before. */
static void phase_measure(const struct phase *ph, pid_t n, struct hog_slot *s, double rate)
{
	struct task_cfg fc = { .cpu = cpu, .policy = SCHED_FIFO, .prio = 10 };
	long long r = ph->r ? ph->r : r_saved, p = ph->p ? ph->p : p_saved, rr = -1, pp = -1;
	long long n0, n1, f0, f1;
	double share, share_it, fshare, lo, hi;
	uint64_t i0, i1;
	int64_t t0, t1;
	int ok;
	pid_t f;

	fs_get(&rr, &pp);
	/* stops by itself only well after the window, even where the guest runs late */
	f = spawn_hog(&fc, &s[1], HOG_COUNT, p + WINDOW_NS + 30 * NSEC_PER_SEC);
	if (hogs_wait_ready(&s[1], 1, 5 * NSEC_PER_SEC)) {
		kill_child(f);
		ktap_fail(ph->name, "FIFO hog did not start");
		return;
	}
	sleep_ns(p + 100 * NSEC_PER_MSEC);
	i0 = s[0].iters;
	schedstat_read(n, &n0, NULL, NULL);
	schedstat_read(f, &f0, NULL, NULL);
	t0 = now_ns();
	sleep_ns(WINDOW_NS);
	i1 = s[0].iters;
	schedstat_read(n, &n1, NULL, NULL);
	schedstat_read(f, &f1, NULL, NULL);
	t1 = now_ns();
	kill_child(f);
	s[1].ready = 0;

	share = (double)(n1 - n0) / (t1 - t0);
	share_it = (i1 - i0) / rate / (t1 - t0);
	fshare = (double)(f1 - f0) / (t1 - t0);
	lo = (double)r / p - (double)r / WINDOW_NS;
	hi = (double)r / p + (double)r / WINDOW_NS;
	ktap_diag("%s: fair_server cpu%d runtime %lld ns / period %lld ns (read back), %s: "
		  "normal hog %.2f%% by schedstat, %.2f%% by loop count over %.2f s; expected "
		  "%.2f%% (bounds %.2f..%.2f%%); FIFO hog %.2f%%", ph->name, cpu, rr, pp, sched_name(),
		  100 * share, 100 * share_it, (t1 - t0) / 1e9, 100.0 * r / p, 100 * lo, 100 * hi,
		  100 * fshare);
	ok = share >= lo && share <= hi;
	if (guest_clock_exact())
		ok = ok && share_it >= lo && share_it <= hi;
	else
		ktap_diag("loop-count share not asserted: guest clock is the %s", guest_clock_name());
	ktap_check(ok, ph->name, "normal share %.2f%% (schedstat) / %.2f%% (loops) outside "
		   "%.2f..%.2f%% for runtime %lld / period %lld", 100 * share, 100 * share_it,
		   100 * lo, 100 * hi, r, p);
	/* Let the normal hog run alone a little before the next write */
	sleep_ms(100);
}

int main(void)
{
	static const struct phase phases[NPHASE] = {
		{ "written_runtime", 100 * NSEC_PER_MSEC, 1000 * NSEC_PER_MSEC },
		{ "written_period", 150 * NSEC_PER_MSEC, 500 * NSEC_PER_MSEC },
		{ "rewritten_original", 0, 0 },
	};
	struct task_cfg nc = { .policy = SCHED_OTHER, .nice = 0 };
	struct hog_slot *s = shared_alloc(sizeof(*s) * 2);
	long long rr = -1, pp = -1, rt;
	int warnings0, warnings1;
	int64_t c0;
	uint64_t i0;
	double rate;
	pid_t n;

	cpu = test_cpu();
	nc.cpu = cpu;
	ktap_plan("fair_server_guard", NPHASE + 2);
	ktap_watchdog(180);
	ktap_diag("scheduler: %s, %d CPUs online, test CPU %d", sched_name(), ncpus_online(), cpu);
	become_controller_or_bail();
	if (fs_get(&r_saved, &p_saved))
		ktap_bail("cannot read fair_server/cpu%d runtime and period", cpu);
	if (read_ll(rt_path, &rt))
		ktap_bail("cannot read %s", rt_path);
	ktap_diag("fair_server cpu%d: runtime %lld ns, period %lld ns; sched_rt_runtime_us %lld",
		  cpu, r_saved, p_saved, rt);
	rt_saved = rt;
	ktap_on_exit(restore);
	if (write_file(rt_path, "-1\n") < 0 || read_ll(rt_path, &rt) || rt != -1)
		ktap_bail("cannot switch RT throttling off (%s := -1)", rt_path);

	warnings0 = klog_warnings();
	n = spawn_hog(&nc, &s[0], HOG_COUNT, 150 * NSEC_PER_SEC);
	if (hogs_wait_ready(s, 1, 5 * NSEC_PER_SEC))
		ktap_bail("normal hog did not start");
	sleep_ms(100);
	c0 = now_ns();
	i0 = s[0].iters;
	sleep_ms(500);
	rate = (double)(s[0].iters - i0) / (now_ns() - c0);
	ktap_diag("normal hog alone on CPU %d: %.3f loop passes per us", cpu, rate * 1000);

	for (int i = 0; i < NPHASE; i++)
		if (!phase_write(&phases[i]))
			phase_measure(&phases[i], n, s, rate);
	warnings1 = klog_warnings();
	ktap_check(warnings0 >= 0 && warnings1 == warnings0, "no_kernel_warning",
		   "kernel log: %d warning lines before, %d after (see the console)", warnings0,
		   warnings1);

	kill_child(n);
	restore();
	ktap_check(!fs_get(&rr, &pp) && rr == r_saved && pp == p_saved &&
		   !read_ll(rt_path, &rt) && rt == rt_saved, "restored",
		   "fair_server %lld / %lld (want %lld / %lld), sched_rt_runtime_us %lld",
		   rr, pp, r_saved, p_saved, rt);
	ktap_finish();
}
