// SPDX-License-Identifier: GPL-2.0
/*
 * rd_isolation - balancing stays inside a root domain and away from CPUs
 * outside every sched domain (4 CPUs; suite.list: rd_partition on the smp4
 * boots, rd_isolcpus on the smp4-iso boots with isolcpus=domain,3).
 *
 * Expected: sched-rsdl.rst rule 12: "Balancing never crosses a root domain
 * or moves a task to or from a CPU outside every sched domain"; only wakeup
 * placement and the core's moves (affinity, cpusets, hotplug) may put a task
 * on an isolated CPU. EEVDF's balancer behaves the same, and the program
 * prints its figures on rsdl=off boots. The shares inside a partition are
 * the Share guarantee with two equal nice-0 hogs per CPU: E / 2E = 0.5 each
 * (EEVDF: equal weights, 0.5 too).
 *
 *  1. isolcpus_no_balance (--isolcpus, or --cpu N): with a CPU isolated by
 *     isolcpus=domain,N (or [flags,]N without "domain": no flag means domain
 *     isolation), 6 nice-0 busy loops are forked pinned to CPU 0 (the
 *     controller's CPU), and each sets its own affinity to every online CPU
 *     while it runs, so it is never woken with the isolated CPU allowed: no
 *     wakeup placement can put it there, and the core does not move a task
 *     whose CPU stays in its new mask. From then on they never sleep, so the
 *     only way onto the isolated CPU is the balancer. Each loop attributes
 *     its own CPU time, pass by pass, to the CPU sched_getcpu() reports (a
 *     pass that changed CPU counts as a move, its time as unattributed).
 *     Passes: no loop ran a single pass on the isolated CPU from the moment
 *     it widened its affinity to the end of the 8 s window (expected exactly
 *     0: 0 moves onto it, 0.0 % of the work there). Printed: the fraction of
 *     the loops' work done on the isolated CPU over the window ("iso_pct="),
 *     per loop its moves, and the RSDL debugfs migration counters. RSDL
 *     before root-domain balancing: 24.9 %; EEVDF: 0.0 %.
 *     Which CPU: --cpu N, or the online CPUs the kernel isolates from the
 *     sched domains (/sys/devices/system/cpu/isolated). The subtest is asked
 *     to run when --cpu or --isolcpus is given or /proc/cmdline has
 *     isolcpus= with domain isolation: asked and no such CPU is not ok; not
 *     asked (no argument, by hand) and no such CPU prints "# SKIP".
 *  2. cpuset_partition (--partition): cgroup v2; a child group with
 *     cpuset.cpus = the last two CPUs P (2-3 on 4 CPUs) and
 *     cpuset.cpus.partition = root, so P gets a root domain of its own and
 *     the root group keeps the others, R (0-1). 2 x |P| hogs are moved into
 *     the partition while asleep, 2 x |R| stay in the root group; every hog
 *     sets its affinity to every online CPU itself, which the kernel narrows
 *     to its cpuset. 1 s after all run, an 8 s window. Passes: no partition
 *     hog ran a pass on R, no root hog one on P (from their start on), and
 *     every hog's share of a CPU (/proc/<pid>/schedstat over the window) is
 *     0.5 +- 0.05. Printed: the RSDL debugfs migration counters before and
 *     after, per hog its moves and CPUs. Needs 4 online CPUs none of which
 *     is isolated at boot (the kernel refuses a root partition over them):
 *     otherwise not ok with --partition, "# SKIP" without an argument.
 * Without an argument both run, each skipping where it cannot. The lab's
 * verdict counts any SKIP as a failure, so suite.list runs each subtest on
 * its own, only on the boots that have what it needs.
 *
 * A failure of 1 means the balancer (idle pull, periodic pull or the wakeup
 * of an idle CPU to pull) moved a task onto a CPU outside every sched
 * domain; of 2, that a task left its cpuset (the core's affinity), or that
 * balancing inside one partition left a CPU with one hog and another with
 * three (shares 1.0 and 0.33 instead of 0.5).
 *
 * The controller (SCHED_FIFO, CPU 0) sleeps through the windows.
 */
#include <sys/stat.h>
#include "util.h"
#include "cgroup.h"

#define MAXCPU 64
#define ISO_HOGS 6
#define MAXH 64
#define WINDOW_NS (8 * NSEC_PER_SEC)
#define SETTLE_NS NSEC_PER_SEC
#define SHARE 0.5
#define SHARE_TOL 0.05

/* One busy loop's account, written by the loop only */
struct rd_hog {
	volatile uint64_t passes[MAXCPU];	/* loop passes per CPU */
	volatile uint64_t ns[MAXCPU];		/* its CPU time per CPU */
	volatile uint64_t moves;		/* passes that changed CPU */
	volatile uint64_t watch_arrivals;	/* ... onto a watched CPU */
	volatile int64_t first_watch_ns;	/* CLOCK_MONOTONIC of the first */
	volatile uint64_t lost_ns;		/* time of the passes that moved */
	volatile uint64_t mask;			/* its affinity after widening */
	volatile int first_cpu;			/* its CPU when it widened */
	volatile int ready;			/* 1: widened, -1: failed */
	volatile int stop;
};

static int n_online;
/* CPUs the loops report arrivals on (subtest 1) */
static uint64_t watch;

/*
 * isolcpus= in the command line @cmdline (modified): returns the CPUs it
 * isolates from the sched domains, 0 if it has flags without "domain";
 * *present = 1 if it is there. Its syntax (kernel/sched/isolation.c):
 * [flag,...,]cpulist, flags nohz, domain, managed_irq; no flag means domain.
 */
static uint64_t parse_isolcpus(char *cmdline, int *present)
{
	char *tok, *save;
	uint64_t m = 0;

	*present = 0;
	for (tok = strtok_r(cmdline, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		const char *v;
		int flags = 0, domain = 0;

		if (strncmp(tok, "isolcpus=", 9))
			continue;
		*present = 1;
		v = tok + 9;
		while (isalpha((unsigned char)*v)) {
			size_t len = strcspn(v, ",");

			flags = 1;
			if (len == 6 && !strncmp(v, "domain", 6))
				domain = 1;
			v += len;
			if (*v == ',')
				v++;
		}
		if (!flags || domain)
			m |= cpulist_bits(v);
	}
	return m;
}

static uint64_t cmdline_isolcpus(int *present)
{
	char buf[4096];

	*present = 0;
	if (read_file("/proc/cmdline", buf, sizeof(buf)) < 0)
		return 0;
	return parse_isolcpus(buf, present);
}

static uint64_t online_mask(void)
{
	cpu_set_t set;

	cpuset_online(&set);
	return cpuset_bits(&set);
}

/* The loop: widen the affinity to every online CPU, then account every pass */
static void rd_hog_loop(struct rd_hog *h, int64_t max_ns)
{
	int64_t start = now_ns(), pt;
	cpu_set_t set;
	int pc;
	uint64_t n = 0;

	cpuset_online(&set);
	if (sched_setaffinity(0, sizeof(set), &set) || sched_getaffinity(0, sizeof(set), &set)) {
		h->ready = -1;
		_exit(1);
	}
	h->mask = cpuset_bits(&set);
	pc = sched_getcpu();
	pt = thread_cpu_ns();
	h->first_cpu = pc;
	h->ready = 1;
	for (;;) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		int c = sched_getcpu();
		int64_t t = thread_cpu_ns();

		if (c >= 0 && c < MAXCPU) {
			h->passes[c]++;
			if (c == pc) {
				h->ns[c] += t - pt;
			} else {
				h->moves++;
				h->lost_ns += t - pt;
				if (watch >> c & 1) {
					if (!h->watch_arrivals)
						h->first_watch_ns = now_ns();
					h->watch_arrivals++;
				}
			}
		}
		pc = c;
		pt = t;
		if ((++n & 63) == 0 && (h->stop || now_ns() - start > max_ns))
			_exit(0);
	}
}

/* A gated child running rd_hog_loop(); its affinity is the controller's (CPU 0) */
static pid_t rd_hog_spawn(struct rd_hog *h, int *gate)
{
	pid_t pid = fork_gated(gate);

	if (pid == 0)
		rd_hog_loop(h, 60 * NSEC_PER_SEC);
	return pid;
}

static int wait_ready(struct rd_hog *h, int nh)
{
	int64_t end = now_ns() + 10 * NSEC_PER_SEC;

	for (;;) {
		int ok = 0;

		for (int i = 0; i < nh; i++) {
			if (h[i].ready < 0)
				return -1;
			ok += h[i].ready == 1;
		}
		if (ok == nh)
			return 0;
		if (now_ns() > end)
			return -1;
		sleep_ms(2);
	}
}

static uint64_t sum_on(const volatile uint64_t *v, uint64_t mask)
{
	uint64_t s = 0;

	for (int c = 0; c < MAXCPU; c++)
		if (mask >> c & 1)
			s += v[c];
	return s;
}

static uint64_t cpus_seen(const struct rd_hog *h)
{
	uint64_t m = 0;

	for (int c = 0; c < MAXCPU; c++)
		if (h->passes[c])
			m |= 1ULL << c;
	return m;
}

static void stop_hogs(struct rd_hog *h, const pid_t *pid, int nh)
{
	for (int i = 0; i < nh; i++)
		h[i].stop = 1;
	for (int i = 0; i < nh; i++)
		kill_child(pid[i]);
}

/* ---- 1. isolcpus ---------------------------------------------------------------- */

static void test_isolcpus(int asked, int want_cpu)
{
	const char *name = "isolcpus_no_balance";
	char b1[64], b2[64], buf[256];
	uint64_t iso, sys_iso = 0, on = online_mask();
	uint64_t ns0[ISO_HOGS][MAXCPU], ns1[ISO_HOGS][MAXCPU];
	uint64_t win_all = 0, win_iso = 0, tot_iso_passes = 0, tot_arrivals = 0, lost = 0;
	struct rd_hog *h;
	pid_t pid[ISO_HOGS];
	int gate[ISO_HOGS];
	struct ktap_sub sub = { 0 };
	int64_t t0, t1;

	if (read_file("/sys/devices/system/cpu/isolated", buf, sizeof(buf)) >= 0)
		sys_iso = cpulist_bits(buf);
	iso = want_cpu >= 0 ? 1ULL << want_cpu : sys_iso & on;
	ktap_diag("isolcpus: CPUs isolated from the sched domains (sysfs): %s, watched: %s%s",
		  sys_iso ? bits_str(sys_iso, b1, sizeof(b1)) : "none",
		  iso ? bits_str(iso, b2, sizeof(b2)) : "none", want_cpu >= 0 ? " (--cpu)" : "");
	if (!iso) {
		if (asked)
			ktap_fail(name, "asked to run, but the kernel isolates no online CPU");
		else
			ktap_skip(name, "no isolated CPU (no isolcpus=domain on this boot)");
		return;
	}
	if (iso & 1 || !(iso & on) || iso == on) {
		ktap_fail(name, "watched CPUs %s: need online CPUs other than CPU 0 and all",
			  bits_str(iso, b1, sizeof(b1)));
		return;
	}
	if (want_cpu >= 0 && !(sys_iso >> want_cpu & 1)) {
		char path[96];

		snprintf(path, sizeof(path), "/sys/kernel/debug/sched/domains/cpu%d/domain0",
			 want_cpu);
		ktap_diag("CPU %d is not isolated by isolcpus=; its sched domains (debugfs): %s",
			  want_cpu, file_exists(path) ? "present: it is NOT isolated" :
			  "none or debugfs not mounted");
	}
	watch = iso;
	h = shared_alloc(sizeof(*h) * ISO_HOGS);
	for (int i = 0; i < ISO_HOGS; i++) {
		h[i].first_cpu = -1;
		pid[i] = rd_hog_spawn(&h[i], &gate[i]);
	}
	rsdl_print_migration_counters("before");
	for (int i = 0; i < ISO_HOGS; i++)
		gate_open(&gate[i]);
	if (wait_ready(h, ISO_HOGS)) {
		ktap_fail(name, "the loops did not widen their affinity");
		stop_hogs(h, pid, ISO_HOGS);
		return;
	}
	for (int i = 0; i < ISO_HOGS; i++)
		ktap_expect(&sub, (h[i].mask & iso) == iso,
			    "loop %d: affinity %s does not include the watched CPUs %s", i,
			    bits_str(h[i].mask, b1, sizeof(b1)), bits_str(iso, b2, sizeof(b2)));
	t0 = now_ns();
	for (int i = 0; i < ISO_HOGS; i++)
		for (int c = 0; c < MAXCPU; c++)
			ns0[i][c] = h[i].ns[c];
	sleep_until_ns(t0 + WINDOW_NS);
	for (int i = 0; i < ISO_HOGS; i++)
		for (int c = 0; c < MAXCPU; c++)
			ns1[i][c] = h[i].ns[c];
	t1 = now_ns();
	rsdl_print_migration_counters("after");

	ktap_diag("%s, %d CPUs online, watched %s, %d nice-0 loops, window %.2f s:", sched_name(),
		  n_online, bits_str(iso, b1, sizeof(b1)), ISO_HOGS, (t1 - t0) / 1e9);
	ktap_diag("loop  first CPU  moves  onto watched  passes there  CPUs seen  window CPU s");
	for (int i = 0; i < ISO_HOGS; i++) {
		uint64_t all = 0, on_iso = 0, passes = sum_on(h[i].passes, iso);

		for (int c = 0; c < MAXCPU; c++) {
			all += ns1[i][c] - ns0[i][c];
			if (iso >> c & 1)
				on_iso += ns1[i][c] - ns0[i][c];
		}
		win_all += all;
		win_iso += on_iso;
		tot_iso_passes += passes;
		tot_arrivals += h[i].watch_arrivals;
		lost += h[i].lost_ns;
		ktap_diag("%4d  %9d  %5llu  %12llu  %12llu  %9s  %11.2f", i, h[i].first_cpu,
			  (unsigned long long)h[i].moves, (unsigned long long)h[i].watch_arrivals,
			  (unsigned long long)passes, bits_str(cpus_seen(&h[i]), b1, sizeof(b1)),
			  all / 1e9);
		if (h[i].watch_arrivals)
			ktap_diag("      loop %d first reached a watched CPU %.1f ms before the "
				  "window's end", i, MS(t1 - h[i].first_watch_ns));
		ktap_expect(&sub, !passes && !h[i].watch_arrivals,
			    "loop %d ran %llu passes on %s (%llu moves onto it)", i,
			    (unsigned long long)passes, bits_str(iso, b1, sizeof(b1)),
			    (unsigned long long)h[i].watch_arrivals);
	}
	ktap_diag("work on the watched CPUs over the window: %.1f %% (iso_pct=%.1f), expected 0.0 %%;"
		  " moves onto them %llu, expected 0", win_all ? 100.0 * win_iso / win_all : 0.0,
		  win_all ? 100.0 * win_iso / win_all : 0.0, (unsigned long long)tot_arrivals);
	ktap_diag("the loops' CPU time in the window: %.2f CPU s of %.2f s x %d CPUs; unattributed "
		  "(passes that changed CPU, whole run): %.3f ms", win_all / 1e9, (t1 - t0) / 1e9,
		  n_online, MS(lost));
	ktap_expect(&sub, !tot_iso_passes, "%llu passes on the watched CPUs in total",
		    (unsigned long long)tot_iso_passes);
	stop_hogs(h, pid, ISO_HOGS);
	munmap(h, sizeof(*h) * ISO_HOGS);
	watch = 0;
	ktap_sub_end(&sub, name);
}

/* ---- 2. cpuset partition -------------------------------------------------------- */

static char grp[200];

/* Make the group a member again and remove it: 0 or -errno of the rmdir */
static int partition_cleanup_ret(void)
{
	int r;

	if (!grp[0])
		return 0;
	cg_write(grp, "cpuset.cpus.partition", "member");
	/* the killed hogs leave the group as they exit: retry for up to 1 s */
	for (int i = 0; (r = rmdir(grp) ? -errno : 0) == -EBUSY && i < 100; i++)
		sleep_ms(10);
	grp[0] = 0;
	return r;
}

static void partition_cleanup(void)
{
	partition_cleanup_ret();
}

static void test_partition(uint64_t boot_iso, int asked)
{
	const char *name = "cpuset_partition";
	char b1[64], b2[64], set[64], val[256];
	uint64_t on = online_mask(), part, rest;
	long long run0[MAXH], run1[MAXH];
	int gate[MAXH], in_part[MAXH], nh, np, r;
	struct rd_hog *h;
	pid_t pid[MAXH];
	struct ktap_sub sub = { 0 };
	int64_t t0, t1;
	int hi = -1, hi2 = -1;

	if (boot_iso & on) {
		if (asked)
			ktap_fail(name, "CPUs %s isolated at boot: no root partition over them",
				  bits_str(boot_iso & on, b1, sizeof(b1)));
		else
			ktap_skip(name, "CPUs isolated at boot: no root partition over them");
		return;
	}
	if (n_online < 4 || __builtin_popcountll(on) != n_online || 2 * n_online > MAXH) {
		ktap_fail(name, "needs 4..%d online CPUs numbered from 0, has %d", MAXH / 2,
			  n_online);
		return;
	}
	for (int c = 0; c < MAXCPU; c++)
		if (on >> c & 1) {
			hi2 = hi;
			hi = c;
		}
	part = 1ULL << hi | 1ULL << hi2;
	rest = on & ~part;
	if (cg_find_root()) {
		ktap_fail(name, "no cgroup2 mount in /proc/mounts");
		return;
	}
	r = cg_write(cg_root, "cgroup.subtree_control", "+cpuset");
	if (r) {
		ktap_fail(name, "enable +cpuset in %s: %s", cg_root, strerror(-r));
		return;
	}
	snprintf(grp, sizeof(grp), "%s/labrd-%d", cg_root, (int)getpid());
	if (mkdir(grp, 0755)) {
		ktap_fail(name, "mkdir %s: %s", grp, strerror(errno));
		grp[0] = 0;
		return;
	}
	ktap_on_exit(partition_cleanup);
	bits_str(part, set, sizeof(set));
	r = cg_write(grp, "cpuset.cpus", set);
	if (!r)
		r = cg_write(grp, "cpuset.cpus.partition", "root");
	if (r) {
		ktap_fail(name, "cpuset.cpus %s, partition root: %s", set, strerror(-r));
		partition_cleanup();
		return;
	}
	if (cg_read(grp, "cpuset.cpus.partition", val, sizeof(val)) || strcmp(val, "root")) {
		ktap_fail(name, "cpuset.cpus.partition reads \"%s\", not \"root\"", val);
		partition_cleanup();
		return;
	}
	if (!cg_read(grp, "cpuset.cpus.effective", val, sizeof(val)))
		ktap_diag("partition %s: cpuset.cpus %s, effective %s, partition root", grp, set,
			  val);
	if (!cg_read(cg_root, "cpuset.cpus.effective", val, sizeof(val)))
		ktap_diag("root group: cpuset.cpus.effective %s (expected %s)", val,
			  bits_str(rest, b1, sizeof(b1)));

	np = 2 * __builtin_popcountll(part);
	nh = np + 2 * __builtin_popcountll(rest);
	h = shared_alloc(sizeof(*h) * nh);
	for (int i = 0; i < nh; i++) {
		h[i].first_cpu = -1;
		in_part[i] = i < np;
		pid[i] = rd_hog_spawn(&h[i], &gate[i]);
		if (in_part[i]) {
			snprintf(val, sizeof(val), "%d", (int)pid[i]);
			r = cg_write(grp, "cgroup.procs", val);
			ktap_expect(&sub, !r, "moving hog %d into the partition: %s", i,
				    strerror(-r));
		}
	}
	rsdl_print_migration_counters("before");
	for (int i = 0; i < nh; i++)
		gate_open(&gate[i]);
	if (wait_ready(h, nh)) {
		ktap_fail(name, "the hogs did not start");
		stop_hogs(h, pid, nh);
		partition_cleanup();
		return;
	}
	sleep_ns(SETTLE_NS);
	t0 = now_ns();
	for (int i = 0; i < nh; i++)
		run0[i] = task_runtime_ns(pid[i]);
	t0 = (t0 + now_ns()) / 2;
	sleep_until_ns(t0 + WINDOW_NS);
	t1 = now_ns();
	for (int i = 0; i < nh; i++)
		run1[i] = task_runtime_ns(pid[i]);
	t1 = (t1 + now_ns()) / 2;
	rsdl_print_migration_counters("after");

	ktap_diag("%s: partition %s with %d hogs, root group %s with %d, window %.2f s after "
		  "%.1f s:", sched_name(), bits_str(part, b1, sizeof(b1)), np,
		  bits_str(rest, b2, sizeof(b2)), nh - np, (t1 - t0) / 1e9, SETTLE_NS / 1e9);
	ktap_diag("hog  group      affinity  share  expected    moves  CPUs seen  passes outside");
	for (int i = 0; i < nh; i++) {
		uint64_t own = in_part[i] ? part : rest;
		uint64_t out = sum_on(h[i].passes, on & ~own);
		double x = (run0[i] < 0 || run1[i] < 0) ? -1 :
			   (double)(run1[i] - run0[i]) / (t1 - t0);
		char b3[64];

		ktap_diag("%3d  %-9s  %8s  %.3f  %.2f..%.2f  %5llu  %9s  %llu", i,
			  in_part[i] ? "partition" : "root", bits_str(h[i].mask, b1, sizeof(b1)),
			  x, SHARE - SHARE_TOL, SHARE + SHARE_TOL, (unsigned long long)h[i].moves,
			  bits_str(cpus_seen(&h[i]), b2, sizeof(b2)), (unsigned long long)out);
		ktap_expect(&sub, !out, "%s hog %d ran %llu passes outside %s (CPUs %s)",
			    in_part[i] ? "partition" : "root", i, (unsigned long long)out,
			    bits_str(own, b1, sizeof(b1)), bits_str(cpus_seen(&h[i]), b3, sizeof(b3)));
		ktap_expect(&sub, (h[i].mask & ~own) == 0, "%s hog %d: affinity %s beyond %s",
			    in_part[i] ? "partition" : "root", i,
			    bits_str(h[i].mask, b1, sizeof(b1)), bits_str(own, b2, sizeof(b2)));
		ktap_expect(&sub, x >= SHARE - SHARE_TOL && x <= SHARE + SHARE_TOL,
			    "%s hog %d share %.3f outside %.2f..%.2f",
			    in_part[i] ? "partition" : "root", i, x, SHARE - SHARE_TOL,
			    SHARE + SHARE_TOL);
	}
	stop_hogs(h, pid, nh);
	munmap(h, sizeof(*h) * nh);
	r = partition_cleanup_ret();
	ktap_expect(&sub, !r, "rmdir of the partition group: %s", strerror(-r));
	ktap_sub_end(&sub, name);
}

static void usage(void)
{
	fprintf(stderr, "usage: rd_isolation [--isolcpus | --cpu N | --partition]\n"
			"  (none)       both subtests; each skips where it cannot run\n"
			"  --isolcpus   subtest 1 only, which must find an isolated CPU\n"
			"  --cpu N      subtest 1 only, watching CPU N\n"
			"  --partition  subtest 2 only, which must be able to run\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int asked = 0, want_cpu = -1, present, run_iso = 1, run_part = 1;
	uint64_t boot_iso, sys_iso = 0;
	char b1[64], val[256];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--isolcpus")) {
			asked = 1;
			run_part = 0;
		} else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
			char *end;

			want_cpu = (int)strtol(argv[++i], &end, 10);
			if (*end || want_cpu < 0 || want_cpu >= MAXCPU)
				usage();
			asked = 1;
			run_part = 0;
		} else if (!strcmp(argv[i], "--partition")) {
			run_iso = 0;
		} else {
			usage();
		}
	}
	if (!run_iso && !run_part)
		usage();
	ktap_plan("rd_isolation", run_iso + run_part);
	ktap_watchdog(120);
	n_online = ncpus_online();
	boot_iso = cmdline_isolcpus(&present);
	if (boot_iso)
		asked = 1;
	if (read_file("/sys/devices/system/cpu/isolated", val, sizeof(val)) >= 0)
		sys_iso = cpulist_bits(val);
	ktap_diag("scheduler: %s, %d CPUs online, isolcpus= on the command line: %s%s%s",
		  sched_name(), n_online, present ? "yes" : "no",
		  boot_iso ? ", domain CPUs " : "", boot_iso ? bits_str(boot_iso, b1, sizeof(b1)) : "");
	become_controller_or_bail();

	if (run_iso)
		test_isolcpus(asked, want_cpu);
	if (run_part)
		test_partition(boot_iso | sys_iso, !run_iso);
	ktap_finish();
}
