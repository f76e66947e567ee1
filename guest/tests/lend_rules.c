// SPDX-License-Identifier: GPL-2.0
/*
 * lend_rules - rule 14 of sched-rsdl.rst (lending, kernel.rsdl_lend) on one CPU.
 *
 * Rule 14: when a running RSDL task W wakes an RSDL task S synchronously (a pipe write)
 * on its own CPU and no loan is pending or active there, a loan is pending; S waits for
 * W (rule 7: a synchronous wakee does not preempt its waker). When W then blocks with
 * time left in its slot, the loan starts and S runs at the better of its own level and
 * W's: on a slot of its own while it has one above W's level, otherwise in W's place,
 * where every ns it runs is charged to W's slot and W's level (W taking its next slots
 * by rule 3), never to S's own; until S blocks, W wakes, W has no slot left, or the
 * rotation ends. So a pair W + S never gets more than E(W) + E(S) per rotation, and a
 * server is charged to each client for that client's requests.
 *
 * Observed through the trace event rsdl:rsdl_loan in a private tracefs instance
 * ("lend_rules"; one event when a loan starts, end=0, one when it ends, end=1, with
 * ns = what the lender was charged), the per-CPU loans= and loan_ns= counters and the
 * header's lend= of /sys/kernel/debug/sched/rsdl, /proc/<pid>/schedstat runtimes, and
 * the server's own thread CPU clock. Every task is pinned to the test CPU (test_cpu():
 * CPU 0 on the 1-CPU boot suite.list runs this on); the controller is SCHED_FIFO and
 * sleeps through the windows. The program sets /proc/sys/kernel/rsdl_lend itself and
 * writes the old value back at exit. E(p) = usable_slots(nice) x quota(nice, rr_interval)
 * (guest/lib/rsdl_spec.h), rr_interval as the boot has it (6 ms).
 *
 *  1. lend_off_no_loans (rule 14: "off by default"): rsdl_lend = 0; a client W burns
 *     0.5 ms, writes a request to a server S over a pipe and blocks reading the reply; S
 *     reads, burns 1 ms, replies; 2 s. Expected: not one rsdl_loan event, the debugfs
 *     loans= of every CPU unchanged, the header says lend=0, round trips > 0. A failure
 *     means a loan started with the mode off.
 *  2. lend_pair_bound (rule 14 and the Share guarantee): rsdl_lend = 1; W (nice 0) burns
 *     0.5 ms per request, S (nice 0) 20 ms (a CPU-hungry pair), beside two nice-0 hogs; a
 *     1 s settle, then a 5 s window. Expected, with E = E(nice 0) and sum E = 4E:
 *       pair share (run W + run S) / (the four runtimes) within 2E / 4E +- 0.05: the
 *         pair takes no more than its two entitlements, and lending lets it use them
 *         (without loans S alone carries the work on E(S) and the pair gets about
 *         E / 3E: 0.337 measured with the mode on but no loans);
 *       each hog's share >= E / 4E - 5 % (relative), 0.2375: no hog loses its share;
 *       at least 1 loan between W and S ended per 100 ms of the window (trace);
 *       what W's slots paid, run W - ns(S->W) + ns(W->S), <= (E / 4E + 0.05) x window,
 *       and what S's slots paid, run S - ns(W->S) + ns(S->W), <= the same
 *         (ns(X->Y): the sum of ns of the end events in the window with lender X and
 *         borrower Y); S's time not on loan, run S - ns(W->S), is printed;
 *       debugfs: the CPU's loans= grew by at least the loans that started in the window,
 *         loan_ns= by at least the ns charged in it; the header says lend=1.
 *     A failure of the pair bound or of a slot's bound means lending gave the pair (or one
 *     of its tasks) more than its entitlements; of the pair's lower bound or of the loan
 *     count, that loans did not happen or did not let the pair use W's slots.
 *  3. lend_two_clients (rule 14: each client is charged for its own requests):
 *     rsdl_lend = 1, no hogs; clients A and B (nice 0) send a request over one request
 *     pipe on a 12 ms grid of CLOCK_MONOTONIC (B 6 ms after A, absolute timers, so the
 *     server's work for one never overlaps the other's request) and block reading their
 *     own reply pipe; the server (nice 19) burns 2 ms of CPU for
 *     A's requests and 1 ms for B's and measures its CPU time per request
 *     (CLOCK_THREAD_CPUTIME_ID, from the read's return to the reply write's), summed per
 *     client. The server is nice 19, at level 20 only, below both clients, so that its
 *     own level never competes with theirs. (With free-running clients, one that wakes
 *     while the server works on the other's loan preempts it when its own level is
 *     higher, rule 7, and its request waits in the pipe: no loan, the server's own
 *     time.) A request the server found already waiting (FIONREAD > 0 before its read:
 *     it came while the server worked) woke nobody and is no loan; its time is printed
 *     apart. Expected, for each client X, over a 5 s window after a 1 s settle:
 *       0.9 x inner(X) - 1 ms <= ns(X->server) <= 1.1 x outer(X) + 1 ms, inner(X) = the
 *         server's CPU time on X's requests that woke it, from the read's return to the
 *         reply write's return, outer(X) = the same from before the read() that blocked
 *         (a loan starts at the server's switch-in and ends inside the reply's write(),
 *         when the client wakes);
 *       ns(A->server) / ns(B->server) within 15 % of inner(A) / inner(B).
 *     A failure means a server's work was charged to the wrong client, to nobody, or not
 *     on loan.
 *
 *  4. lend_own_slot (rule 14c: a borrower with a slot of its own above its lender's
 *     level runs there, on its own time): W nice 19 and S nice -20 (replies by
 *     eventfd), no hogs; S never leaves its first slot, above W's; expected loans W->S
 *     that start (W blocks in its pipe read) and charge W 0 ns. See test_own_slot().
 *
 * EEVDF (rsdl=off): there is no rule 14 (no rsdl_lend, no rsdl_loan event). The same
 * workloads run and their figures are printed as diagnostics (runtimes, shares,
 * the server's time per client) beside EEVDF's weight shares, and the subtests are
 * reported "# SKIP" with the reason. The lab's verdict counts a SKIP as a failure, so
 * suite.list runs this program on the RSDL 1-CPU boot only.
 *
 * Why one CPU: loans are per CPU, and the 5 s shares are exact only on the 1-CPU
 * instruction-count boot (with multi-threaded TCG the host's stalls of a vCPU show up as
 * runtime of whatever it ran).
 */
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include "swtrace.h"

#define TR_DIR "/sys/kernel/tracing/instances/lend_rules"
#define SLACK 0.05		/* points of share: the spec's measurement slack */
#define HOG_REL 0.05		/* a hog's share: at least its table share - 5 % */
#define SETTLE_NS (1 * NSEC_PER_SEC)
#define WINDOW_NS (5 * NSEC_PER_SEC)
#define OFF_NS (2 * NSEC_PER_SEC)
#define W_BURN_NS (500 * NSEC_PER_USEC)
#define S_BURN_NS (20 * NSEC_PER_MSEC)
#define OFF_S_BURN_NS (1 * NSEC_PER_MSEC)
#define NHOGS 2
#define NCLIENTS 2
#define SERVER_NICE 19
#define CHARGE_REL 0.10		/* a client's charge: 10 % of the server's time + 1 ms */
#define CHARGE_ABS_NS NSEC_PER_MSEC
#define RATIO_REL 0.15
#define MAX_PAIRS 64

static const int client_nice[NCLIENTS] = { 0, 0 };
/*
 * Both clients send on one 12 ms grid of CLOCK_MONOTONIC, B 6 ms after A: the
 * server's work (2 + 1 ms) never overlaps, so every request finds it asleep.
 */
#define CLIENT_PERIOD_NS (12 * NSEC_PER_MSEC)
static const int64_t client_offset_ns[NCLIENTS] = { 0, 6 * NSEC_PER_MSEC };
static const int64_t client_work_ns[NCLIENTS] = { 2 * NSEC_PER_MSEC, 1 * NSEC_PER_MSEC };
static const char client_name[NCLIENTS] = { 'A', 'B' };

static int cpu;			/* the test CPU */
static int rsdl;		/* RSDL runs (else EEVDF: figures only) */
static int have_event;		/* the rsdl_loan event is enabled in the instance */
static int rr;			/* rr_interval, ms */

/* ---- rsdl_loan events ------------------------------------------------------------- */

/* Loans of one lender to one borrower that started / ended in the window */
struct loan_sum {
	pid_t lender, borrower;
	long starts, ends;
	int64_t ns;		/* sum of the end events' ns */
};

static struct {
	int64_t t0, t1;		/* the window (trace clock mono = CLOCK_MONOTONIC) */
	long all;		/* every rsdl_loan event of the trace, in the window or not */
	long bad;		/* rsdl_loan lines that did not parse */
	int n;
	struct loan_sum s[MAX_PAIRS];
} loans;

static void loan_line(char *line, void *arg)
{
	long long lender, borrower, ns, end;
	const char *f;
	int64_t t;
	int i;

	(void)arg;
	f = trace_event_at(line, ": rsdl_loan: ", &t);
	if (!f)
		return;
	loans.all++;
	if (kv_get(f, "lender", &lender, NULL, 0) || kv_get(f, "borrower", &borrower, NULL, 0) ||
	    kv_get(f, "ns", &ns, NULL, 0) || kv_get(f, "end", &end, NULL, 0) ||
	    kv_get(f, "level", NULL, NULL, 0)) {
		if (loans.bad++ < 3)
			ktap_diag("unparsed rsdl_loan line: %.200s", line);
		return;
	}
	if (t < loans.t0 || t > loans.t1)
		return;
	for (i = 0; i < loans.n; i++)
		if (loans.s[i].lender == lender && loans.s[i].borrower == borrower)
			break;
	if (i == loans.n) {
		if (loans.n == MAX_PAIRS)
			return;
		loans.s[loans.n++] = (struct loan_sum){ .lender = lender, .borrower = borrower };
	}
	if (end) {
		loans.s[i].ends++;
		loans.s[i].ns += ns;
	} else {
		loans.s[i].starts++;
	}
}

/* Stop tracing, sum the loans of the window [t0, t1]; the events the buffer lost */
static long loans_read(int64_t t0, int64_t t1)
{
	memset(&loans, 0, sizeof(loans));
	loans.t0 = t0;
	loans.t1 = t1;
	if (!have_event)
		return 0;
	trace_dir_write(TR_DIR, "tracing_on", "0");
	if (trace_for_each_line(TR_DIR "/trace", loan_line, NULL) < 0)
		ktap_diag("cannot read %s/trace", TR_DIR);
	return trace_overrun(TR_DIR, cpu);
}

/* The loans of @lender to @borrower in the window (-1: any) */
static struct loan_sum loans_of(pid_t lender, pid_t borrower)
{
	struct loan_sum r = { .lender = lender, .borrower = borrower };

	for (int i = 0; i < loans.n; i++) {
		if ((lender >= 0 && loans.s[i].lender != lender) ||
		    (borrower >= 0 && loans.s[i].borrower != borrower))
			continue;
		r.starts += loans.s[i].starts;
		r.ends += loans.s[i].ends;
		r.ns += loans.s[i].ns;
	}
	return r;
}

static void trace_rm(void)
{
	trace_instance_remove(TR_DIR);
}

/* ---- debugfs sched/rsdl ----------------------------------------------------------- */

/* lend= of the header line, or -1 */
static int debugfs_lend(void)
{
	char buf[256];
	long long v;

	if (read_file(RSDL_DEBUGFS_PATH, buf, sizeof(buf)) < 0 || kv_get(buf, "lend", &v, NULL, 0))
		return -1;
	return (int)v;
}

struct dbg_loans {
	long long cpu_loans, cpu_ns;	/* the test CPU's loans= and loan_ns= */
	long long all_loans;		/* loans= summed over the online CPUs */
};

/* 0, or -1 when a CPU record or its loan counters are missing */
static int dbg_loans_read(struct dbg_loans *d)
{
	struct rsdl_cpu_stat st;

	memset(d, 0, sizeof(*d));
	for (int c = 0; c < ncpus_online(); c++) {
		if (!cpu_is_online(c))
			continue;
		if (rsdl_debugfs_cpu(c, &st) || st.loans < 0 || st.loan_ns < 0)
			return -1;
		d->all_loans += st.loans;
		if (c == cpu) {
			d->cpu_loans = st.loans;
			d->cpu_ns = st.loan_ns;
		}
	}
	return 0;
}

/* ---- tasks ------------------------------------------------------------------------ */

/* A gated child on the test CPU at @nice, started by gate_open(@gate) */
static pid_t start_task(void (*body)(void *), void *arg, int nice, int *gate)
{
	cpu_set_t one;
	pid_t pid;
	int r;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pid = spawn_gated(body, arg, &one, gate);
	r = set_policy(pid, SCHED_OTHER, nice, 0);
	if (r)
		ktap_bail("nice %d for %d: %s", nice, (int)pid, strerror(-r));
	return pid;
}

/* A failed pipe call of a child: noted for the parent, the child ends */
static void __attribute__((noreturn)) child_failed(volatile int *err, ssize_t r)
{
	*err = r < 0 ? errno : EPIPE;
	_exit(1);
}

/* The pair: W (client) and S (server) over a request and a reply pipe */
struct pair {
	int req[2], rep[2];
	int rep_efd;		/* >= 0: replies by eventfd (not a WF_SYNC wakeup) */
	int64_t s_burn;
	volatile uint64_t trips;	/* replies W received */
	volatile int err;
};

static void pair_client(void *arg)
{
	struct pair *p = arg;
	uint64_t v;
	char c = 'r';
	ssize_t r;

	for (;;) {
		burn_cpu_ns(W_BURN_NS);
		r = write(p->req[1], &c, 1);
		if (r == 1 && p->rep_efd >= 0)
			r = read(p->rep_efd, &v, 8) == 8;
		else if (r == 1)
			r = read(p->rep[0], &c, 1);
		if (r != 1)
			child_failed(&p->err, r);
		p->trips++;
	}
}

static void pair_server(void *arg)
{
	struct pair *p = arg;
	uint64_t one = 1;
	char c;
	ssize_t r;

	for (;;) {
		r = read(p->req[0], &c, 1);
		if (r == 1) {
			burn_cpu_ns(p->s_burn);
			if (p->rep_efd >= 0)
				r = write(p->rep_efd, &one, 8) == 8;
			else
				r = write(p->rep[1], &c, 1);
		}
		if (r != 1)
			child_failed(&p->err, r);
	}
}

enum { T_W, T_S, T_HOG };	/* pair_run.pid[]: W, S, then the hogs */

struct pair_run {
	pid_t pid[2 + NHOGS];
	long long run[2 + NHOGS];	/* runtime in the window, ns */
	int ntasks;
	int64_t t0, t1;
	uint64_t trips;
	int err;
	long lost;			/* trace events lost */
	int dbg_ok;
	struct dbg_loans d0, d1;	/* before the tasks start, after they are gone */
};

/*
 * W (nice @w_nice) and S (nice @s_nice) beside @nhogs nice-0 hogs: @settle, then a
 * window of @window; S replies by eventfd if @efd_reply, else through the reply pipe
 */
static void pair_run(struct pair_run *pr, int w_nice, int s_nice, bool efd_reply,
		     int64_t s_burn, int nhogs, int64_t settle, int64_t window)
{
	struct pair *p = shared_alloc(sizeof(*p));
	struct hog_slot *h = shared_alloc(sizeof(*h) * NHOGS);
	struct task_cfg hc = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 };
	long long r0[2 + NHOGS] = { 0 };
	int gw, gs;

	memset(pr, 0, sizeof(*pr));
	pr->ntasks = 2 + nhogs;
	p->s_burn = s_burn;
	if (pipe(p->req) || pipe(p->rep))
		ktap_bail("pipe: %s", strerror(errno));
	p->rep_efd = efd_reply ? eventfd(0, 0) : -1;
	if (efd_reply && p->rep_efd < 0)
		ktap_bail("eventfd: %s", strerror(errno));
	pr->dbg_ok = !rsdl || !dbg_loans_read(&pr->d0);
	if (have_event && trace_instance_start(TR_DIR))
		ktap_bail("cannot start tracing in %s", TR_DIR);
	for (int i = 0; i < nhogs; i++)
		pr->pid[T_HOG + i] = spawn_hog(&hc, &h[i], HOG_COUNT,
					       settle + window + 10 * NSEC_PER_SEC);
	if (nhogs && hogs_wait_ready(h, nhogs, 5 * NSEC_PER_SEC))
		ktap_bail("hogs did not start");
	pr->pid[T_S] = start_task(pair_server, p, s_nice, &gs);
	pr->pid[T_W] = start_task(pair_client, p, w_nice, &gw);
	gate_open(&gs);
	gate_open(&gw);

	sleep_ns(settle);
	pr->t0 = now_ns();
	for (int i = 0; i < pr->ntasks; i++)
		schedstat_read(pr->pid[i], &r0[i], NULL, NULL);
	pr->trips = p->trips;
	sleep_until_ns(pr->t0 + window);
	for (int i = 0; i < pr->ntasks; i++) {
		schedstat_read(pr->pid[i], &pr->run[i], NULL, NULL);
		pr->run[i] -= r0[i];
	}
	pr->trips = p->trips - pr->trips;
	pr->t1 = now_ns();
	pr->err = p->err;
	for (int i = 0; i < pr->ntasks; i++)
		kill_child(pr->pid[i]);
	pr->lost = loans_read(pr->t0, pr->t1);
	if (rsdl && dbg_loans_read(&pr->d1))
		pr->dbg_ok = 0;
	close(p->req[0]);
	close(p->req[1]);
	close(p->rep[0]);
	close(p->rep[1]);
	if (p->rep_efd >= 0)
		close(p->rep_efd);
	munmap(p, sizeof(*p));
	munmap(h, sizeof(*h) * NHOGS);
}

/* The trace must have the event and every event of the run (@lost: events lost) */
static void trace_usable(struct ktap_sub *s, long lost)
{
	ktap_expect(s, have_event, "no rsdl:rsdl_loan event in this kernel (%s/events/rsdl)",
		    TR_DIR);
	ktap_expect(s, lost == 0, "the trace buffer lost %ld events", lost);
	ktap_expect(s, loans.bad == 0, "%ld rsdl_loan lines did not parse", loans.bad);
}

/* ---- 1. lend_off_no_loans ---------------------------------------------------------- */

static void test_off(void)
{
	const char *name = "lend_off_no_loans";
	struct ktap_sub s = { 0 };
	struct pair_run pr;
	int lend;

	if (rsdl && rsdl_lend_set(0))
		ktap_bail("cannot set %s to 0", RSDL_LEND_PATH);
	lend = debugfs_lend();
	pair_run(&pr, 0, 0, false, OFF_S_BURN_NS, 0, 200 * NSEC_PER_MSEC, OFF_NS);
	ktap_diag("%s: W burns %.1f ms, S %.1f ms per request; %.0f ms: %llu round trips, W ran "
		  "%.1f ms, S %.1f ms", name, MS(W_BURN_NS), MS(OFF_S_BURN_NS), MS(pr.t1 - pr.t0),
		  (unsigned long long)pr.trips, MS(pr.run[T_W]), MS(pr.run[T_S]));
	if (!rsdl) {
		ktap_skip(name, "EEVDF: no rule 14 (rsdl_lend and rsdl_loan exist with RSDL only)");
		return;
	}
	ktap_diag("%s: rsdl_lend=%d, debugfs lend=%d; rsdl_loan events in the whole run: %ld "
		  "(expected 0); debugfs loans= of all CPUs %lld -> %lld (expected unchanged)",
		  name, rsdl_lend_get(), lend, loans.all, pr.d0.all_loans, pr.d1.all_loans);
	trace_usable(&s, pr.lost);
	ktap_expect(&s, pr.err == 0, "a pipe call of the pair failed: %s", strerror(pr.err));
	ktap_expect(&s, pr.trips > 0, "no round trip in the window");
	ktap_expect(&s, lend == 0, "debugfs header lend=%d, want 0", lend);
	ktap_expect(&s, loans.all == 0, "%ld rsdl_loan events with rsdl_lend=0", loans.all);
	ktap_expect(&s, pr.dbg_ok, "no loans=/loan_ns= in the per-CPU records of %s",
		    RSDL_DEBUGFS_PATH);
	ktap_expect(&s, pr.d1.all_loans == pr.d0.all_loans,
		    "debugfs loans= %lld -> %lld with rsdl_lend=0", pr.d0.all_loans,
		    pr.d1.all_loans);
	ktap_sub_end(&s, name);
}

/* ---- 2. lend_pair_bound ------------------------------------------------------------ */

static void test_pair(void)
{
	const char *name = "lend_pair_bound";
	struct rsdl_task t[2 + NHOGS];
	struct ktap_sub s = { 0 };
	struct pair_run pr;
	struct loan_sum ws, sw;
	double total = 0, win, pair_share, pair_exp, hog_exp, slot_bound;
	long long charged_w, charged_s;
	long min_loans;
	int lend;

	for (int i = 0; i < 2 + NHOGS; i++)
		t[i] = (struct rsdl_task){ SCHED_OTHER, 0 };
	if (rsdl && rsdl_lend_set(1))
		ktap_bail("cannot set %s to 1", RSDL_LEND_PATH);
	lend = debugfs_lend();
	pair_run(&pr, 0, 0, false, S_BURN_NS, NHOGS, SETTLE_NS, WINDOW_NS);
	for (int i = 0; i < pr.ntasks; i++)
		total += pr.run[i];
	win = (double)(pr.t1 - pr.t0);
	pair_share = total > 0 ? (pr.run[T_W] + pr.run[T_S]) / total : 0;
	pair_exp = rsdl ? rsdl_share(t, 4, T_W, rr) + rsdl_share(t, 4, T_S, rr)
			: eevdf_share(t, 4, T_W) + eevdf_share(t, 4, T_S);
	hog_exp = rsdl ? rsdl_share(t, 4, T_HOG, rr) : eevdf_share(t, 4, T_HOG);
	ktap_diag("%s: window %.0f ms; W ran %.1f ms, S %.1f ms, hogs %.1f and %.1f ms (%.1f%% of "
		  "the window); %llu round trips (W %.1f ms, S %.1f ms each)", name, MS(win),
		  MS(pr.run[T_W]), MS(pr.run[T_S]), MS(pr.run[T_HOG]), MS(pr.run[T_HOG + 1]),
		  100.0 * total / win, (unsigned long long)pr.trips, MS(W_BURN_NS), MS(S_BURN_NS));
	ktap_diag("%s: sched=%s pair_share=%.3f expected %.3f..%.3f (%s %.3f +- %.2f) "
		  "hog_share=%.3f,%.3f expected >= %.4f (%.3f - %.0f%%)", name,
		  rsdl ? "rsdl" : "eevdf", pair_share, pair_exp - SLACK,
		  pair_exp + SLACK, rsdl ? "2E/4E =" : "EEVDF 2w/4w =", pair_exp, SLACK,
		  pr.run[T_HOG] / total, pr.run[T_HOG + 1] / total, hog_exp * (1 - HOG_REL),
		  hog_exp, 100 * HOG_REL);
	if (!rsdl) {
		ktap_skip(name, "EEVDF: no rule 14; the shares above are printed for comparison");
		return;
	}
	ws = loans_of(pr.pid[T_W], pr.pid[T_S]);
	sw = loans_of(pr.pid[T_S], pr.pid[T_W]);
	charged_w = pr.run[T_W] - sw.ns + ws.ns;
	charged_s = pr.run[T_S] - ws.ns + sw.ns;
	slot_bound = (hog_exp + SLACK) * win;
	min_loans = (long)(win / (100 * NSEC_PER_MSEC));
	ktap_diag("%s: E = %d slots x %d ms = %.0f ms per task, sum E = 4E; rsdl_lend=%d, debugfs "
		  "lend=%d", name, rsdl_usable_slots(0), rr,
		  MS(rsdl_entitlement_ns(SCHED_OTHER, 0, rr)), rsdl_lend_get(), lend);
	ktap_diag("%s: loans in the window: W->S %ld started, %ld ended, %.1f ms charged to W; "
		  "S->W %ld started, %ld ended, %.1f ms charged to S; of other tasks %ld ended; "
		  "expected >= %ld ended between W and S (1 per 100 ms)", name, ws.starts, ws.ends,
		  MS(ws.ns), sw.starts, sw.ends, MS(sw.ns),
		  loans_of(-1, -1).ends - ws.ends - sw.ends, min_loans);
	ktap_diag("%s: W's slots paid %.1f ms (ran %.1f - borrowed %.1f + lent %.1f), S's %.1f ms "
		  "(ran %.1f - borrowed %.1f + lent %.1f; not on loan %.1f); expected each <= "
		  "(E/4E + %.2f) x window = %.1f ms", name, MS(charged_w), MS(pr.run[T_W]),
		  MS(sw.ns), MS(ws.ns), MS(charged_s), MS(pr.run[T_S]), MS(ws.ns), MS(sw.ns),
		  MS(pr.run[T_S] - ws.ns), SLACK, MS(slot_bound));
	ktap_diag("%s: debugfs CPU %d loans= %lld -> %lld (+%lld, expected >= %ld started in the "
		  "window), loan_ns= +%.1f ms (expected >= %.1f ms charged in the window)", name,
		  cpu, pr.d0.cpu_loans, pr.d1.cpu_loans, pr.d1.cpu_loans - pr.d0.cpu_loans,
		  loans_of(-1, -1).starts, MS(pr.d1.cpu_ns - pr.d0.cpu_ns),
		  MS(loans_of(-1, -1).ns));
	trace_usable(&s, pr.lost);
	ktap_expect(&s, pr.err == 0, "a pipe call of the pair failed: %s", strerror(pr.err));
	ktap_expect(&s, lend == 1, "debugfs header lend=%d, want 1", lend);
	ktap_expect(&s, pair_share <= pair_exp + SLACK,
		    "pair share %.3f > %.3f (2E/4E %.3f + %.2f)", pair_share, pair_exp + SLACK,
		    pair_exp, SLACK);
	ktap_expect(&s, pair_share >= pair_exp - SLACK,
		    "pair share %.3f < %.3f (2E/4E %.3f - %.2f): the pair did not use its "
		    "entitlements", pair_share, pair_exp - SLACK, pair_exp, SLACK);
	for (int i = 0; i < NHOGS; i++) {
		double sh = total > 0 ? pr.run[T_HOG + i] / total : 0;

		ktap_expect(&s, sh >= hog_exp * (1 - HOG_REL),
			    "hog %d share %.4f < %.4f (E/4E %.3f - %.0f%%)", i + 1, sh,
			    hog_exp * (1 - HOG_REL), hog_exp, 100 * HOG_REL);
	}
	ktap_expect(&s, ws.ends + sw.ends >= min_loans,
		    "%ld loans between W and S ended in %.0f ms, expected >= %ld",
		    ws.ends + sw.ends, MS(win), min_loans);
	ktap_expect(&s, charged_w <= slot_bound, "W's slots paid %.1f ms > %.1f ms", MS(charged_w),
		    MS(slot_bound));
	ktap_expect(&s, charged_s <= slot_bound, "S's slots paid %.1f ms > %.1f ms", MS(charged_s),
		    MS(slot_bound));
	ktap_expect(&s, pr.dbg_ok, "no loans=/loan_ns= in the per-CPU records of %s",
		    RSDL_DEBUGFS_PATH);
	ktap_expect(&s, pr.d1.cpu_loans - pr.d0.cpu_loans >= loans_of(-1, -1).starts,
		    "debugfs loans= grew by %lld, %ld loans started in the window",
		    pr.d1.cpu_loans - pr.d0.cpu_loans, loans_of(-1, -1).starts);
	ktap_expect(&s, pr.d1.cpu_ns - pr.d0.cpu_ns >= loans_of(-1, -1).ns,
		    "debugfs loan_ns= grew by %lld, the window's loans charged %lld ns",
		    pr.d1.cpu_ns - pr.d0.cpu_ns, (long long)loans_of(-1, -1).ns);
	ktap_sub_end(&s, name);
}

/* ---- 3. lend_two_clients ----------------------------------------------------------- */

struct shop {
	int req[2], rep[NCLIENTS][2];
	volatile uint64_t replies[NCLIENTS];	/* replies each client received */
	/* the server's CPU time and requests per client: requests that woke it, found waiting */
	volatile int64_t woke_ns[NCLIENTS], queued_ns[NCLIENTS];
	/* the same from before the read() that blocked (it includes the loan's switch-in) */
	volatile int64_t woke_outer_ns[NCLIENTS];
	volatile long woke_n[NCLIENTS], queued_n[NCLIENTS];
	volatile int err;
};

struct client_arg {
	struct shop *sh;
	int id;
};

/*
 * A loan runs from the server's switch-in after its client blocked to the client's
 * wakeup in the reply's write(): within the server's CPU time from before its read()
 * to after its write() (outer), and at least its time from the read's return to the
 * write's (inner) but for the write's tail; 10 % + 1 ms of slack either way.
 */
static int64_t charge_lo(int64_t inner)
{
	return (int64_t)((1 - CHARGE_REL) * inner) - CHARGE_ABS_NS;
}

static int64_t charge_hi(int64_t outer)
{
	return (int64_t)((1 + CHARGE_REL) * outer) + CHARGE_ABS_NS;
}

static void shop_client(void *arg)
{
	struct client_arg *a = arg;
	struct shop *sh = a->sh;
	char c = client_name[a->id];
	int64_t next = (now_ns() / CLIENT_PERIOD_NS + 1) * CLIENT_PERIOD_NS +
		       client_offset_ns[a->id];
	ssize_t r;

	for (;;) {
		while (next <= now_ns())
			next += CLIENT_PERIOD_NS;
		sleep_until_ns(next);
		r = write(sh->req[1], &c, 1);
		if (r == 1)
			r = read(sh->rep[a->id][0], &c, 1);
		if (r != 1)
			child_failed(&sh->err, r);
		sh->replies[a->id]++;
	}
}

static void shop_server(void *arg)
{
	struct shop *sh = arg;
	int64_t c0, cpre, d;
	ssize_t r;
	char c;
	int i, waiting;

	for (;;) {
		if (ioctl(sh->req[0], FIONREAD, &waiting))
			waiting = 0;
		cpre = thread_cpu_ns();
		r = read(sh->req[0], &c, 1);
		c0 = thread_cpu_ns();
		for (i = 0; r == 1 && i < NCLIENTS && client_name[i] != c; i++)
			;
		if (r == 1 && i == NCLIENTS) {
			errno = EPROTO;
			r = -1;
		}
		if (r == 1) {
			burn_cpu_ns(client_work_ns[i]);
			r = write(sh->rep[i][1], &c, 1);
		}
		if (r != 1)
			child_failed(&sh->err, r);
		d = thread_cpu_ns() - c0;
		if (waiting > 0) {
			sh->queued_ns[i] += d;
			sh->queued_n[i]++;
		} else {
			sh->woke_ns[i] += d;
			sh->woke_outer_ns[i] += thread_cpu_ns() - cpre;
			sh->woke_n[i]++;
		}
	}
}

static void test_clients(void)
{
	const char *name = "lend_two_clients";
	struct shop *sh = shared_alloc(sizeof(*sh));
	struct client_arg ca[NCLIENTS];
	int64_t woke0[NCLIENTS], outer0[NCLIENTS], queued0[NCLIENTS], t0, t1;
	long wn0[NCLIENTS], qn0[NCLIENTS], lost;
	uint64_t rep0[NCLIENTS];
	struct loan_sum l[NCLIENTS];
	struct ktap_sub s = { 0 };
	pid_t server, client[NCLIENTS];
	int gs, gc[NCLIENTS];
	double mratio, cratio;

	if (rsdl && rsdl_lend_set(1))
		ktap_bail("cannot set %s to 1", RSDL_LEND_PATH);
	if (pipe(sh->req))
		ktap_bail("pipe: %s", strerror(errno));
	for (int i = 0; i < NCLIENTS; i++)
		if (pipe(sh->rep[i]))
			ktap_bail("pipe: %s", strerror(errno));
	if (have_event && trace_instance_start(TR_DIR))
		ktap_bail("cannot start tracing in %s", TR_DIR);
	server = start_task(shop_server, sh, SERVER_NICE, &gs);
	for (int i = 0; i < NCLIENTS; i++) {
		ca[i] = (struct client_arg){ sh, i };
		client[i] = start_task(shop_client, &ca[i], client_nice[i], &gc[i]);
	}
	gate_open(&gs);
	for (int i = 0; i < NCLIENTS; i++)
		gate_open(&gc[i]);

	sleep_ns(SETTLE_NS);
	t0 = now_ns();
	for (int i = 0; i < NCLIENTS; i++) {
		woke0[i] = sh->woke_ns[i];
		outer0[i] = sh->woke_outer_ns[i];
		wn0[i] = sh->woke_n[i];
		queued0[i] = sh->queued_ns[i];
		qn0[i] = sh->queued_n[i];
		rep0[i] = sh->replies[i];
	}
	sleep_until_ns(t0 + WINDOW_NS);
	t1 = now_ns();
	for (int i = 0; i < NCLIENTS; i++) {
		woke0[i] = sh->woke_ns[i] - woke0[i];
		outer0[i] = sh->woke_outer_ns[i] - outer0[i];
		wn0[i] = sh->woke_n[i] - wn0[i];
		queued0[i] = sh->queued_ns[i] - queued0[i];
		qn0[i] = sh->queued_n[i] - qn0[i];
		rep0[i] = sh->replies[i] - rep0[i];
	}
	kill_child(server);
	for (int i = 0; i < NCLIENTS; i++)
		kill_child(client[i]);
	lost = loans_read(t0, t1);

	ktap_diag("%s: window %.0f ms; server nice %d, %c nice %d (%.0f ms per request), %c "
		  "nice %d (%.0f ms), requests every %.0f ms, %c's %.0f ms after %c's", name,
		  MS(t1 - t0), SERVER_NICE, client_name[0], client_nice[0], MS(client_work_ns[0]),
		  client_name[1], client_nice[1], MS(client_work_ns[1]), MS(CLIENT_PERIOD_NS),
		  client_name[1], MS(client_offset_ns[1]), client_name[0]);
	for (int i = 0; i < NCLIENTS; i++) {
		l[i] = loans_of(client[i], server);
		ktap_diag("%s: client %c: %llu replies; the server's CPU time on its requests: "
			  "%.1f ms on %ld that woke it, %.1f ms on %ld found waiting; loans "
			  "%c->server %ld started, %ld ended, charged %.1f ms, expected %.1f .. "
			  "%.1f ms", name, client_name[i], (unsigned long long)rep0[i],
			  MS(woke0[i]), wn0[i], MS(queued0[i]), qn0[i], client_name[i], l[i].starts,
			  l[i].ends, MS(l[i].ns), MS(charge_lo(woke0[i])), MS(charge_hi(outer0[i])));
	}
	if (!rsdl) {
		ktap_skip(name, "EEVDF: no rule 14; the server's time per client is printed above");
		munmap(sh, sizeof(*sh));
		return;
	}
	mratio = woke0[1] > 0 ? (double)woke0[0] / woke0[1] : 0;
	cratio = l[1].ns > 0 ? (double)l[0].ns / l[1].ns : 0;
	ktap_diag("%s: charged A/B = %.3f, the server's time A/B = %.3f, expected within %.0f%%; "
		  "loans of others to the server %ld, of the server %ld", name, cratio, mratio,
		  100 * RATIO_REL, loans_of(-1, server).ends - l[0].ends - l[1].ends,
		  loans_of(server, -1).ends);
	trace_usable(&s, lost);
	ktap_expect(&s, sh->err == 0, "a pipe call failed: %s", strerror(sh->err));
	for (int i = 0; i < NCLIENTS; i++) {
		ktap_expect(&s, wn0[i] > 0, "no request of %c woke the server", client_name[i]);
		ktap_expect(&s, l[i].ns >= charge_lo(woke0[i]) && l[i].ns <= charge_hi(outer0[i]),
			    "client %c charged %.1f ms, expected %.1f .. %.1f ms", client_name[i],
			    MS(l[i].ns), MS(charge_lo(woke0[i])), MS(charge_hi(outer0[i])));
	}
	ktap_expect(&s, mratio > 0 && fabs(cratio / mratio - 1) <= RATIO_REL,
		    "charged A/B %.3f, server time A/B %.3f: more than %.0f%% apart", cratio,
		    mratio, 100 * RATIO_REL);
	munmap(sh, sizeof(*sh));
	ktap_sub_end(&s, name);
}

/* ---- 4. lend_own_slot -------------------------------------------------------------- */

/*
 * Rule 14c: a borrower with a slot of its own above its lender's level runs there, on
 * its own time. W is nice 19 (one slot, at level L19 = its first), S nice -20, whose
 * first slot is above L19; S replies by eventfd (no WF_SYNC, so S never lends to W), no
 * hogs. A rotation lasts while W has time: W runs at most quota(19) + 1 tick on its
 * slot, W_BURN_NS per request, so S serves at most R = ceil((quota(19) + tick) /
 * W_BURN_NS) requests per rotation, at most R x (OWN_S_BURN_NS + 1 ms of wake path) of
 * its time, less than quota(-20): S never leaves its first slot and always has a slot
 * above L19. Expected: loans W->S start in
 * the window (every request is a pipe write W then blocks after: rule 14a/b) and charge
 * W 0 ns in all (a design that ran S in W's place charged W 2306.7 ms in 1463 loans);
 * round trips > 0.
 */
#define OWN_W_NICE 19
#define OWN_S_NICE (-20)
#define OWN_S_BURN_NS (1 * NSEC_PER_MSEC)

static void test_own_slot(void)
{
	const char *name = "lend_own_slot";
	int lw = rsdl_first_slot(rsdl_row(OWN_W_NICE), 0);
	int ls = rsdl_first_slot(rsdl_row(OWN_S_NICE), 0);
	int64_t qw = rsdl_quota_ns(OWN_W_NICE, rr), qs = rsdl_quota_ns(OWN_S_NICE, rr);
	int64_t reqs = (qw + RSDL_TICK_NS + W_BURN_NS - 1) / W_BURN_NS;
	int64_t s_need = reqs * (OWN_S_BURN_NS + NSEC_PER_MSEC);
	struct ktap_sub s = { 0 };
	struct pair_run pr;
	struct loan_sum ws;

	if (rsdl && rsdl_lend_set(1))
		ktap_bail("cannot set %s to 1", RSDL_LEND_PATH);
	pair_run(&pr, OWN_W_NICE, OWN_S_NICE, true, OWN_S_BURN_NS, 0, SETTLE_NS, WINDOW_NS);
	ktap_diag("%s: W nice %d burns %.1f ms, S nice %d %.1f ms per request, replies by "
		  "eventfd; %.0f ms: %llu round trips, W ran %.1f ms, S %.1f ms", name,
		  OWN_W_NICE, MS(W_BURN_NS), OWN_S_NICE, MS(OWN_S_BURN_NS), MS(pr.t1 - pr.t0),
		  (unsigned long long)pr.trips, MS(pr.run[T_W]), MS(pr.run[T_S]));
	if (!rsdl) {
		ktap_skip(name, "EEVDF: no rule 14 (rsdl_lend and rsdl_loan exist with RSDL only)");
		return;
	}
	ws = loans_of(pr.pid[T_W], pr.pid[T_S]);
	ktap_diag("%s: W's slot at level %d, S's first at level %d (quota %.1f ms); per rotation "
		  "S serves <= %lld requests, <= %.1f ms < quota(-20): S keeps a slot above W's",
		  name, lw, ls, MS(qs), (long long)reqs, MS(s_need));
	ktap_diag("%s: loans W->S %ld started, %ld ended (expected > 0), %.3f ms charged to W "
		  "(expected 0); all loans in the window %ld", name, ws.starts, ws.ends, MS(ws.ns),
		  loans_of(-1, -1).starts);
	trace_usable(&s, pr.lost);
	ktap_expect(&s, ls < lw && s_need < qs, "the setting does not give S a slot above W's "
		    "(levels %d / %d, %.1f ms of %.1f)", ls, lw, MS(s_need), MS(qs));
	ktap_expect(&s, pr.err == 0, "a pipe call of the pair failed: %s", strerror(pr.err));
	ktap_expect(&s, pr.trips > 0, "no round trip in the window");
	ktap_expect(&s, ws.starts > 0 && ws.ends > 0,
		    "%ld loans W->S started, %ld ended: W's pipe writes lent nothing", ws.starts,
		    ws.ends);
	ktap_expect(&s, ws.ns == 0,
		    "W was charged %.3f ms for S, which had a slot of its own above W's level",
		    MS(ws.ns));
	ktap_sub_end(&s, name);
}

int main(void)
{
	int r;

	ktap_plan("lend_rules", 4);
	ktap_watchdog(120);
	rsdl = sched_is_rsdl();
	cpu = test_cpu();
	rr = rsdl ? rr_interval_get() : RSDL_RR_DEFAULT_MS;
	become_controller_or_bail();
	ktap_diag("scheduler: %s, %d CPUs online, every task on CPU %d", sched_name(),
		  ncpus_online(), cpu);
	if (rsdl) {
		if (rr <= 0)
			ktap_bail("cannot read rr_interval");
		if (rsdl_lend_get() < 0)
			ktap_bail("%s is missing (rule 14)", RSDL_LEND_PATH);
		ktap_diag("rr_interval %d ms, rsdl_lend %d at the start (written back at exit)", rr,
			  rsdl_lend_get());
		ktap_on_exit(trace_rm);
		r = trace_instance_setup(TR_DIR, 1024, "rsdl/rsdl_loan");
		if (!r) {
			char mask[32];

			/* the test CPU's loans only, like its debugfs counters */
			snprintf(mask, sizeof(mask), "%lx", 1UL << cpu);
			r = trace_dir_write(TR_DIR, "tracing_cpumask", mask);
		}
		have_event = !r;
		if (r)
			ktap_diag("no rsdl_loan tracing in %s: %s (every trace check fails)",
				  TR_DIR, strerror(-r));
	} else {
		ktap_diag("EEVDF: the workloads run and their figures are printed; rule 14's "
			  "checks are RSDL's (SKIP)");
	}
	test_off();
	test_pair();
	test_clients();
	test_own_slot();
	ktap_finish();
}
