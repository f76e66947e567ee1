// SPDX-License-Identifier: GPL-2.0
/*
 * rsdl_edges - the rules of sched-rsdl.rst at their edges. Observed through the rsdl trace
 * events in a private tracefs instance ("rsdl_edges", with sched_switch, sched_stat_runtime =
 * every RSDL charge, and sched_process_fork; the boot's "lab" instance is left alone),
 * /proc/<pid>/sched and debugfs sched/rsdl, with a SCHED_FIFO controller on the tasks' CPU
 * that inspects them while they cannot run. Expected values come from the rules and
 * lib/rsdl_spec.h; a kernel without events/rsdl fails every trace check with that reason.
 * A /proc/<pid>/sched read costs 6-8 ms of CPU on the lab's debug kernel, so slot ends are
 * timed from switch-out gaps instead: the next slot ends one quota of CPU time later.
 *
 *  1. rule5_idle_fresh_save_no_rotation (rule 5), rr 10: a task that slept on the expired
 *     array (its last slot ended in its sleep's dequeue) or on the active one, woken after
 *     its CPU went idle, read before it runs: a later rotation, active array, time_slice ==
 *     quota, level = first slot of its row from the stair, that level funded (debugfs; and
 *     its rsdl_slot after an rsdl_major_rotation idle=1). Renicing the only task of the
 *     active array (a yielder on the expired one) moves no rotation. Failure: stale or
 *     unfunded state survives idle, or an attribute change starts a rotation.
 *  2. rule4_after_rule3 (rule 4): hog mixes -10/0 (rr 2), 0/0/0 and 0/5/10 (rr 1). When a
 *     charge ends both the slot of a task at a level it was moved to and that level's quota,
 *     the task takes its next slot first (rule 3): if that is the same level (its bit there
 *     is clear), the slot's quota is granted to the level, which stays open if that leaves
 *     it quota (no rsdl_level_close of it in that charge); otherwise it closes then.
 *     Failures: a slot taken at a level whose quota had run out other than by such a retake
 *     (an exhausted level served on), or a retaken level closed anyway. Needs >= 1 such
 *     charge. A task's first slot in the trace is not judged: whether it had been moved to
 *     that level happened before the trace began (16 of 600 hog mixes had one, 0 unexplained).
 *  3. rule3_6_pick_and_place (rules 3, 6), rr 20: every hog's time_slice, followed exactly
 *     through its charges, is > 0 at each switch to it. A waiting hog is switched
 *     NORMAL->BATCH->NORMAL or moved to a cgroup and back (each cgroup_attach_task is a
 *     change point: the write sleeps while the hogs run); from a change point until the
 *     changed hog has run, every hog switched in must be the head predicted by the queues
 *     rebuilt from the trace (control trials: no change). A running task that makes itself
 *     SCHED_IDLE while another waits below level 39 is rescheduled within that call.
 *  4. rule8_fork_of_yielded_or_expired_parent (rule 8), parent and hog nice 19, rr 100: the
 *     child, read before it ran, has 0 < time_slice <= half the parent's (<= half a quota),
 *     child + parent after <= parent before, the parent's level and rotation, no rsdl_slot
 *     of its own. Parents just back from sched_yield(), and parents whose last slot ends in
 *     task_fork's charge (fork() timed by the CPU time from fork() to that charge, measured
 *     in the first forks, in rounds of 9 until one hits, at most 6); needs >= 1 of the
 *     latter.
 *  5. rule1_2_overrun_funding (rules 1, 2), rr 1: reading debugfs delays the tick
 *     (interrupts off), so the next charge exceeds a quota. Nice 0 alone: no usable level
 *     below its own that it never ran at holds a quota (debugfs), and each multi-slot
 *     overrun is one rsdl_slot funded with one quota. Nice 19 (one slot): a whole-rotation
 *     overrun (rsdl_slot time_slice == quota, then rsdl_expire) is queued funded at level 20.
 *  7. rule13_rr_floor (rule 13): rr_interval * 1e6 >= the tick (CONFIG_HZ from
 *     /proc/config.gz; without it this subtest is not run) and a write 1 ms below the
 *     floor fails with EINVAL.
 *  9. trace_events: `perf list 'rsdl:*'` names the four events, and each fires under two
 *     nice 0 hogs in 0.6 s (2.5 rotations).
 * With --smp (2 CPUs):
 *  6. rule12_migration_funding (rule 12): a hog moved by sched_setaffinity from CPU 1 (held
 *     by a SCHED_FIFO helper meanwhile, so nothing is charged there) to RSDL-idle CPU 0: the
 *     source level's quota falls by exactly min(its time, what the level held), never
 *     below 0; the destination level gains its time; level and time are kept; its level
 *     does not close on CPU 0 before its next slot there. Needs >= 1 move in which the
 *     level held less than its time.
 * --only ITEMS (e.g. --only 45) runs just those subtests, for debugging.
 */
#include <sys/stat.h>
#include "cgroup.h"
#include "swtrace.h"

#define RR_MS 6
#define MAXCPU 16
#define LAST_LEVEL (RSDL_LEVELS - 1)
#define TR_DIR "/sys/kernel/tracing/instances/rsdl_edges"
#define US_ (NSEC_PER_USEC)
#define MS_ (NSEC_PER_MSEC)

static int cpu;		/* the CPU of the one-CPU subtests */
static int have_events;	/* events/rsdl exists in this kernel */

/* ---- the trace instance ---------------------------------------------------------- */

enum ev_type { EV_SLOT, EV_CLOSE, EV_EXPIRE, EV_MAJOR, EV_SWITCH, EV_FORK, EV_RUN, EV_ATTACH };

struct ev {
	int64_t t;		/* CLOCK_MONOTONIC (trace_clock mono), us resolution */
	int cpu, type;
	char irq;		/* 'h' hardirq, 's' softirq, '.' task context */
	pid_t pid;		/* slot, expire, runtime, attach: the task; switch: next; fork: child */
	pid_t prev;		/* switch: prev; fork: parent */
	int level, below, idle, nr_moved;
	int64_t ts, lq;		/* runtime: ts = the charge */
	long long rot;
};

/* Not inherited by children: forks stay as cheap as the tasks under test need them */
#define EV_CAP 600000L
static struct ev *evs;
static long nev;
static long tr_lost;

static int tr_write(const char *file, const char *val)
{
	char path[200];
	ssize_t r;

	snprintf(path, sizeof(path), TR_DIR "/%s", file);
	r = write_file(path, val);
	return r < 0 ? (int)r : 0;
}

static void tr_cleanup(void)
{
	if (!file_exists(TR_DIR))
		return;
	tr_write("tracing_on", "0");
	tr_write("events/enable", "0");
	rmdir(TR_DIR);
}

/* Create the instance: mono clock; sched_switch, _process_fork, _stat_runtime and rsdl events */
static int tr_setup(void)
{
	int r;

	tr_cleanup();
	if (mkdir(TR_DIR, 0755) && errno != EEXIST)
		return -errno;
	ktap_on_exit(tr_cleanup);
	tr_write("tracing_on", "0");
	r = tr_write("trace_clock", "mono");
	if (!r)
		r = tr_write("buffer_size_kb", "16384");
	if (!r)
		r = tr_write("events/sched/sched_switch/enable", "1");
	if (!r)
		r = tr_write("events/sched/sched_process_fork/enable", "1");
	if (!r)
		r = tr_write("events/sched/sched_stat_runtime/enable", "1");
	if (r)
		return r;
	evs = mmap(NULL, EV_CAP * sizeof(*evs), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (evs == MAP_FAILED || madvise(evs, EV_CAP * sizeof(*evs), MADV_DONTFORK))
		return -ENOMEM;
	tr_write("events/cgroup/cgroup_attach_task/enable", "1");
	have_events = file_exists(TR_DIR "/events/rsdl/rsdl_slot") &&
		      !tr_write("events/rsdl/enable", "1");
	return 0;
}

/* Empty the buffer and trace the CPUs of @mask */
static void tr_start(unsigned long mask)
{
	char m[32];
	int fd;

	tr_write("tracing_on", "0");
	snprintf(m, sizeof(m), "%lx", mask);
	tr_write("tracing_cpumask", m);
	fd = open(TR_DIR "/trace", O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
	tr_write("tracing_on", "1");
}

static int parse_line(const char *line, struct ev *e)
{
	const char *p = strstr(line, "] "), *lb, *name, *q;
	unsigned long long sec, usec;
	size_t fl;

	if (!p)
		return 0;
	for (lb = p; lb > line && *lb != '['; lb--)
		;
	if (*lb != '[' || sscanf(lb, "[%d]", &e->cpu) != 1)
		return 0;
	p += 2;
	while (*p == ' ')
		p++;
	fl = strcspn(p, " ");
	e->irq = fl >= 3 ? p[2] : '.';
	p += fl;
	while (*p == ' ')
		p++;
	if (sscanf(p, "%llu.%llu:", &sec, &usec) != 2)
		return 0;
	e->t = (int64_t)sec * NSEC_PER_SEC + (int64_t)usec * US_;
	name = strchr(p, ':');
	if (!name)
		return 0;
	name += 2;
	if (!strncmp(name, "rsdl_slot: ", 11)) {
		e->type = EV_SLOT;
		q = strstr(name, " pid=");
		return q && sscanf(q, " pid=%d level=%d time_slice=%" SCNd64 " level_quota=%" SCNd64
				   " rotation=%lld", &e->pid, &e->level, &e->ts, &e->lq, &e->rot) == 5;
	}
	if (!strncmp(name, "rsdl_level_close: ", 18)) {
		int c;

		e->type = EV_CLOSE;
		return sscanf(name + 18, "cpu=%d level=%d level_quota=%" SCNd64 " nr_moved=%d below=%d"
			      " rotation=%lld", &c, &e->level, &e->lq, &e->nr_moved, &e->below,
			      &e->rot) == 6;
	}
	if (!strncmp(name, "rsdl_expire: ", 13)) {
		e->type = EV_EXPIRE;
		q = strstr(name, " pid=");
		return q && sscanf(q, " pid=%d level=%d time_slice=%" SCNd64 " rotation=%lld",
				   &e->pid, &e->level, &e->ts, &e->rot) == 4;
	}
	if (!strncmp(name, "rsdl_major_rotation: ", 21)) {
		int c;

		e->type = EV_MAJOR;
		return sscanf(name + 21, "cpu=%d rotation=%lld idle=%d", &c, &e->rot, &e->idle) == 3;
	}
	if (!strncmp(name, "sched_switch: ", 14)) {
		e->type = EV_SWITCH;
		q = strstr(name, " prev_pid=");
		if (!q || sscanf(q, " prev_pid=%d", &e->prev) != 1)
			return 0;
		q = strstr(q, " next_pid=");
		return q && sscanf(q, " next_pid=%d", &e->pid) == 1;
	}
	if (!strncmp(name, "sched_stat_runtime: ", 20)) {
		e->type = EV_RUN;
		q = strstr(name, " pid=");
		return q && sscanf(q, " pid=%d runtime=%" SCNd64, &e->pid, &e->ts) == 2;
	}
	if (!strncmp(name, "cgroup_attach_task: ", 20)) {
		e->type = EV_ATTACH;
		q = strstr(name, " pid=");
		return q && sscanf(q, " pid=%d", &e->pid) == 1;
	}
	if (!strncmp(name, "sched_process_fork: ", 20)) {
		e->type = EV_FORK;
		q = strstr(name, " pid=");
		if (!q || sscanf(q, " pid=%d", &e->prev) != 1)
			return 0;
		q = strstr(q, " child_pid=");
		return q && sscanf(q, " child_pid=%d", &e->pid) == 1;
	}
	return 0;
}

/* One line of the trace: kept in evs[] if it is one of our events, counted if evs[] is full */
static void tr_add_line(char *line, void *arg)
{
	struct ev e;

	(void)arg;
	memset(&e, 0, sizeof(e));
	if (line[0] == '#' || !parse_line(line, &e))
		return;
	if (nev < EV_CAP)
		evs[nev++] = e;
	else
		tr_lost++;
}

/* Stop tracing and parse the buffer into evs[]; the number of events or -errno */
static long tr_stop(unsigned long mask)
{
	int r;

	tr_write("tracing_on", "0");
	nev = 0;
	tr_lost = 0;
	if (!evs)
		return -ENOMEM;
	r = trace_for_each_line(TR_DIR "/trace", tr_add_line, NULL);
	if (r < 0)
		return r;
	for (int c = 0; c < MAXCPU; c++) {
		char path[200], st[1024], *p;

		if (!(mask & (1UL << c)))
			continue;
		snprintf(path, sizeof(path), TR_DIR "/per_cpu/cpu%d/stats", c);
		if (read_file(path, st, sizeof(st)) > 0 && (p = strstr(st, "overrun: ")))
			tr_lost += atol(p + 9);
	}
	return nev;
}

static long count_ev(int type, int on_cpu)
{
	long n = 0;

	for (long i = 0; i < nev; i++)
		n += evs[i].type == type && (on_cpu < 0 || evs[i].cpu == on_cpu);
	return n;
}

/* Trace checks need the rsdl events and every event of the window */
static int trace_usable(struct ktap_sub *s, const char *what)
{
	if (!have_events)
		return ktap_expect(s, 0, "%s: this kernel has no rsdl trace events (%s)", what,
				   TR_DIR "/events/rsdl missing");
	return ktap_expect(s, tr_lost == 0, "%s: the trace buffer lost %ld events", what, tr_lost);
}

/* ---- debugfs sched/rsdl ---------------------------------------------------------------- */

struct dlevel {
	int present;
	long long queued, quota, closed;
};

struct dcpu {
	int found;
	long long rotation, prio_level, nr_running;
	struct dlevel lv[2][RSDL_LEVELS];	/* [0] active, [1] expired */
};

static int dbg_read(struct dcpu *d, int n)
{
	static char buf[1 << 17];
	char *line, *save;

	memset(d, 0, n * sizeof(*d));
	if (read_file(RSDL_DEBUGFS_PATH, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long c, l;
		char arr[16];

		if (kv_get(line, "cpu", &c, NULL, 0) || c < 0 || c >= n)
			continue;
		if (!kv_get(line, "level", &l, NULL, 0)) {
			struct dlevel *v;

			if (l < 0 || l >= RSDL_LEVELS || kv_get(line, "array", NULL, arr, sizeof(arr)))
				continue;
			v = &d[c].lv[strcmp(arr, "active") != 0][l];
			v->present = 1;
			kv_get(line, "queued", &v->queued, NULL, 0);
			kv_get(line, "quota_ns", &v->quota, NULL, 0);
			kv_get(line, "closed", &v->closed, NULL, 0);
		} else if (!kv_get(line, "rotation", &d[c].rotation, NULL, 0)) {
			d[c].found = 1;
			kv_get(line, "prio_level", &d[c].prio_level, NULL, 0);
			kv_get(line, "nr_running", &d[c].nr_running, NULL, 0);
		}
	}
	return 0;
}

static long long dbg_queued(const struct dcpu *d, int arr)
{
	long long n = 0;

	for (int l = 0; l < RSDL_LEVELS; l++)
		n += d->lv[arr][l].queued;
	return n;
}

/* ---- tasks ---------------------------------------------------------------------------- */

static int fields(pid_t pid, struct rsdl_fields *f)
{
	const char *missing = NULL;
	int r = rsdl_fields_read(pid, f, &missing);

	if (r && missing)
		ktap_diag("field %s missing from /proc/%d/sched", missing, (int)pid);
	return r;
}

static pid_t hog(int nice, struct hog_slot *s)
{
	struct task_cfg c = { .cpu = cpu, .policy = SCHED_OTHER, .nice = nice };

	return spawn_hog(&c, s, HOG_COUNT, 60 * NSEC_PER_SEC);
}

/*
 * Slot ends in CPU time. A task whose slot ends while another one waits at its level is
 * switched out at once; spinning on the thread clock (each call charges the caller, ~0.1
 * ms on the lab's debug kernel) it sees the switch as a gap in CLOCK_MONOTONIC, and the
 * slot ended between the last two clock values: wait_gap() returns them. Its next slot
 * then ends exactly one quota of CPU time later (the overrun is carried: rule 2).
 * /proc/self/sched cannot give this: reading it takes 6-8 ms of CPU, and its
 * se.sum_exec_runtime and rsdl.time_slice lines come from different charges.
 */
static void wait_gap(int64_t *lo, int64_t *hi, int64_t thresh)
{
	int64_t s_prev = thread_cpu_ns(), m_prev = now_ns(), s, m;

	for (;;) {
		s = thread_cpu_ns();
		m = now_ns();
		if (m - m_prev > thresh) {
			*lo = s_prev;
			*hi = s;
			return;
		}
		s_prev = s;
		m_prev = m;
	}
}

/* Run until the thread clock reaches @target: clock calls, then CLOCK_MONOTONIC (vDSO) */
static void spin_exec(int64_t target)
{
	int64_t s, m;

	while ((s = thread_cpu_ns()) < target - 500 * US_)
		;
	if (s >= target)
		return;
	m = now_ns() + (target - s);
	while (now_ns() < m)
		;
}

/* ---- 1. rule 5 ------------------------------------------------------------------------ */

/* rule 5's idle rounds: a quota longer than T's own /proc read */
#define IDLE_RR_MS 10
/*
 * Rounds until 2 slept on the expired array and 1 on the active: about 1 in 4 sleeps on
 * the expired array (9 of 34 rounds in 5 boots, one boot needing 10 rounds for its first)
 */
#define IDLE_ROUNDS 24

struct t1_shm {
	volatile int phase;	/* 1: in its last slot, 2: about to sleep */
};

/*
 * Variant 0: sleep as its last slot (level 39) ends: after a slot began (a gap) it reads
 * its level; at 37 it waits for the gap that starts 39 and sleeps 10 us of CPU before
 * that slot's end, so the charge in the dequeue of its sleep ends the slot.
 * Variant 1: sleep 30 ms of CPU into the rotation.
 */
static void __attribute__((noreturn)) t1_body(int variant, int rfd, struct t1_shm *sh)
{
	int64_t q = rsdl_quota_ns(0, IDLE_RR_MS), lo, hi, t;
	struct rsdl_fields f;
	char c;

	for (int k = 0; variant == 0 && k < 80; k++) {
		wait_gap(&lo, &hi, 3 * MS_);
		t = now_ns();
		if (rsdl_fields_read(getpid(), &f, NULL))
			break;
		if (now_ns() - t > q - MS_ || f.array || f.level != LAST_LEVEL - 2)
			continue;
		sh->phase = 1;
		wait_gap(&lo, &hi, 3 * MS_);
		spin_exec(lo + q - 10 * US_);
		break;
	}
	if (variant)
		burn_cpu_ns(30 * MS_);
	sh->phase = 2;
	if (read(rfd, &c, 1) != 1)
		_exit(1);
	_exit(0);
}

struct t1_round {
	int variant, kind;	/* kind: 0 expired when it slept, 1 active, -1 neither */
	pid_t T;
	int valid;
	int64_t t_sleep, t_wake, t_end;
	struct rsdl_fields fs, fw;
	struct dcpu dw;
};

static void item1_round(struct t1_round *r)
{
	static struct dcpu d[MAXCPU];
	struct t1_shm *sh = shared_alloc(sizeof(*sh));
	struct hog_slot *hs = shared_alloc(sizeof(*hs));
	int pfd[2];
	pid_t H;

	if (pipe(pfd))
		ktap_bail("pipe: %s", strerror(errno));
	r->T = fork_child();
	if (r->T == 0) {
		close(pfd[1]);
		t1_body(r->variant, pfd[0], sh);
	}
	close(pfd[0]);
	H = hog(0, hs);
	/* poll often once T is in its last slot: H must not end the rotation meanwhile */
	for (int64_t end = now_ns() + 12 * NSEC_PER_SEC; sh->phase < 2 && now_ns() < end;)
		sleep_ns(sh->phase ? MS_ : 5 * MS_);
	r->kind = -1;
	if (sh->phase < 2 || wait_blocked(r->T, 2 * NSEC_PER_SEC) || fields(r->T, &r->fs)) {
		ktap_diag("round: T (pid %d) did not reach its sleep (phase %d)", (int)r->T,
			  sh->phase);
		goto out;
	}
	if (r->fs.rotation == r->fs.cpu_rotation + 1)
		r->kind = 0;
	else if (r->fs.rotation == r->fs.cpu_rotation && !r->fs.array)
		r->kind = 1;
	r->t_sleep = now_ns();
	kill_child(H);
	H = 0;
	sleep_ms(5);		/* the CPU is idle: T sleeps, H is gone, we sleep */
	r->t_wake = now_ns();
	if (write(pfd[1], "g", 1) != 1)
		goto out;
	/* T is queued; we are SCHED_FIFO on its CPU, so it has not run yet */
	if (fields(r->T, &r->fw) || dbg_read(d, MAXCPU))
		goto out;
	r->t_end = now_ns();
	r->dw = d[cpu];
	r->valid = r->kind >= 0 && r->fw.sum_exec == r->fs.sum_exec;
out:
	if (H)
		kill_child(H);
	close(pfd[1]);
	reap_child(r->T);
	munmap(sh, sizeof(*sh));
	munmap(hs, sizeof(*hs));
}

static void item1_check_round(struct ktap_sub *s, struct t1_round *r, int64_t q, uint64_t row)
{
	const char *k = r->kind ? "active" : "expired";
	int want_level = rsdl_first_slot(row, (int)r->dw.prio_level);
	long long lq = r->fw.level >= 0 && r->fw.level < RSDL_LEVELS ?
		       r->dw.lv[0][r->fw.level].quota : 0;
	int slot = 0, idle = 0;

	ktap_diag("%s round (pid %d slept at level %lld, time_slice %lld, rotation %lld, CPU "
		  "rotation %lld): woken: rotation %lld (CPU %lld), array %lld, level %lld "
		  "(expected %d), time_slice %lld (expected the quota %" PRId64 "), level quota %lld "
		  "(expected >= %" PRId64 ")", k, (int)r->T, r->fs.level, r->fs.time_slice,
		  r->fs.rotation, r->fs.cpu_rotation, r->fw.rotation, r->fw.cpu_rotation,
		  r->fw.array, r->fw.level, want_level, r->fw.time_slice, q, lq, q);
	ktap_expect(s, r->fw.rotation == r->fw.cpu_rotation && r->fw.array == 0,
		    "%s: woken task not on the active array of the CPU's rotation (rotation %lld, "
		    "CPU %lld, array %lld)", k, r->fw.rotation, r->fw.cpu_rotation, r->fw.array);
	ktap_expect(s, r->fw.rotation > r->fs.rotation,
		    "%s: woken task kept the rotation it held (%lld), no fresh start", k,
		    r->fw.rotation);
	ktap_expect(s, r->fw.time_slice == q, "%s: time_slice %lld, expected a full quota %" PRId64,
		    k, r->fw.time_slice, q);
	ktap_expect(s, r->fw.level == want_level, "%s: level %lld, expected %d (first slot of the "
		    "row from stair %lld)", k, r->fw.level, want_level, r->dw.prio_level);
	ktap_expect(s, lq >= q, "%s: its level %lld holds %lld ns, expected >= %" PRId64
		    " (its slot funded)", k, r->fw.level, lq, q);
	if (!have_events)
		return;
	for (long i = 0; i < nev; i++) {
		struct ev *e = &evs[i];

		if (e->cpu != cpu)
			continue;
		if (e->type == EV_MAJOR && e->idle && e->t >= r->t_sleep && e->t <= r->t_wake)
			idle++;
		if (e->type == EV_SLOT && e->pid == r->T && e->t >= r->t_wake - 100 * US_ &&
		    e->t <= r->t_end + 100 * US_) {
			slot++;
			ktap_diag("  rsdl_slot pid %d level %d time_slice %" PRId64 " level_quota %" PRId64
				  " rotation %lld", (int)e->pid, e->level, e->ts, e->lq, e->rot);
			ktap_expect(s, e->ts == q && e->lq >= q && e->level == r->fw.level &&
				    e->rot == r->fw.rotation,
				    "%s: rsdl_slot at the wake: level %d time_slice %" PRId64
				    " level_quota %" PRId64 " rotation %lld, expected level %lld, "
				    "time_slice %" PRId64 ", level_quota >= that, rotation %lld", k,
				    e->level, e->ts, e->lq, e->rot, r->fw.level, q, r->fw.rotation);
		}
	}
	ktap_expect(s, idle >= 1, "%s: no rsdl_major_rotation idle=1 on CPU %d between the sleep "
		    "and the wake", k, cpu);
	ktap_expect(s, slot == 1, "%s: %d rsdl_slot events for the woken task at its wake, "
		    "expected 1", k, slot);
}

static void __attribute__((noreturn)) yielder_body(void)
{
	for (;;)
		sched_yield();
}

static void item1(void)
{
	struct ktap_sub s = { 0 };
	static struct t1_round rounds[IDLE_ROUNDS];
	int64_t q = rsdl_quota_ns(0, IDLE_RR_MS);
	uint64_t row = rsdl_row(0);
	int nexp = 0, nact = 0, n = 0, valid_save = 0;
	int64_t w0[12] = { 0 }, w1[12] = { 0 };
	struct hog_slot *hs;
	pid_t T, U;

	rr_interval_set_or_bail(IDLE_RR_MS);
	tr_start(1UL << cpu);
	for (int i = 0; i < IDLE_ROUNDS && (nexp < 2 || nact < 1); i++) {
		struct t1_round *r = &rounds[n];

		memset(r, 0, sizeof(*r));
		r->variant = (i == 4 || i == 8) && !nact ? 1 : 0;
		item1_round(r);
		if (!r->valid) {
			ktap_diag("round %d (variant %s): not usable: slept with rotation %lld, CPU "
				  "rotation %lld, array %lld, level %lld (%s); ran before it was read: %d",
				  i, r->variant ? "active" : "last slot", r->fs.rotation,
				  r->fs.cpu_rotation, r->fs.array, r->fs.level,
				  r->kind < 0 ? "neither array" : r->kind ? "active" : "expired",
				  r->fw.sum_exec != r->fs.sum_exec);
			continue;
		}
		nexp += r->kind == 0;
		nact += r->kind == 1;
		n++;
	}
	tr_stop(1UL << cpu);
	if (have_events)
		trace_usable(&s, "idle rounds");
	for (int i = 0; i < n; i++)
		item1_check_round(&s, &rounds[i], q, row);
	ktap_diag("idle rounds: %d slept on the expired array, %d on the active array (need >= 1 "
		  "each)", nexp, nact);
	ktap_expect(&s, nexp >= 1, "no round in which the task slept on the expired array");
	ktap_expect(&s, nact >= 1, "no round in which the task slept on the active array");

	/* DEQUEUE_SAVE of the only task of the active array */
	hs = shared_alloc(sizeof(*hs));
	T = hog(0, hs);
	U = fork_child();
	if (U == 0)
		yielder_body();
	hogs_wait_ready(hs, 1, 5 * NSEC_PER_SEC);
	sleep_ms(300);
	tr_start(1UL << cpu);
	for (int i = 0; i < 30 && valid_save < 6; i++) {
		static struct dcpu d0[MAXCPU], d1[MAXCPU];
		struct rsdl_fields ft, fu, ft2;
		int nice = valid_save % 2 ? 0 : 1;

		sleep_ms(7 + (i * 5) % 17);
		if (fields(T, &ft) || fields(U, &fu) || dbg_read(d0, MAXCPU))
			break;
		if (ft.array || fu.array != 1 || dbg_queued(&d0[cpu], 0) != 1 ||
		    dbg_queued(&d0[cpu], 1) < 1)
			continue;
		w0[valid_save] = now_ns();
		if (setpriority(PRIO_PROCESS, T, nice)) {
			ktap_expect(&s, 0, "setpriority(%d, %d): %s", (int)T, nice, strerror(errno));
			break;
		}
		w1[valid_save] = now_ns();
		if (fields(T, &ft2) || dbg_read(d1, MAXCPU))
			break;
		ktap_diag("renice %d of the only active task: CPU rotation %lld -> %lld (expected "
			  "unchanged), its rotation %lld -> %lld (expected unchanged)", nice,
			  d0[cpu].rotation, d1[cpu].rotation, ft.rotation, ft2.rotation);
		ktap_expect(&s, d1[cpu].rotation == d0[cpu].rotation,
			    "renice to %d of the only active task moved the CPU's rotation %lld -> %lld",
			    nice, d0[cpu].rotation, d1[cpu].rotation);
		ktap_expect(&s, ft2.rotation == ft.rotation, "renice to %d gave the task rotation "
			    "%lld (had %lld)", nice, ft2.rotation, ft.rotation);
		valid_save++;
	}
	tr_stop(1UL << cpu);
	if (trace_usable(&s, "renice")) {
		long bad = 0;

		for (long i = 0; i < nev; i++)
			for (int j = 0; j < valid_save; j++)
				bad += evs[i].type == EV_MAJOR && evs[i].cpu == cpu &&
				       evs[i].t >= w0[j] && evs[i].t <= w1[j];
		ktap_diag("rsdl_major_rotation events inside the %d renice calls: %ld (expected 0)",
			  valid_save, bad);
		ktap_expect(&s, bad == 0, "%ld rsdl_major_rotation events inside renice calls", bad);
	}
	ktap_diag("renices of the only active task (a yielder on the expired array): %d (need >= 3)",
		  valid_save);
	ktap_expect(&s, valid_save >= 3, "only %d renices found the task alone on the active array",
		    valid_save);
	kill_child(T);
	kill_child(U);
	munmap(hs, sizeof(*hs));
	rr_interval_set_or_bail(RR_MS);
	ktap_sub_end(&s, "rule5_idle_fresh_save_no_rotation");
}

/* ---- 2. rule 4 ------------------------------------------------------------------------ */

struct trk {
	pid_t pid;
	int64_t q;
	uint64_t row;
	int known, level, arr;
	long long rot;
	uint64_t used;
};

struct r4_stats {
	long slots, moved_ends, closed_together, refunds, neg_before, refund_closed, unexplained;
	long unknown;
};

static const char *const ev_names[] = {
	"slot", "close", "expire", "major", "switch", "fork", "runtime", "attach"
};

/*
 * A slot at an exhausted level that the tracker does not explain as a retake: the tracked
 * state of the task and the events on this CPU before it, so that a failure shows whether
 * the kernel served an exhausted level or the tracker lost the task's place.
 */
static void r4_show_unexplained(const struct trk *k, long i)
{
	const struct ev *e = &evs[i];
	int shown = 0;
	long j;

	ktap_diag("  unexplained: pid %d slot at level %d rotation %lld: level_quota %" PRId64
		  " = %" PRId64 " before its quota (t %.6f); tracked: known %d, array %s, "
		  "level %d, rotation %lld, level %s in its used set", (int)e->pid, e->level,
		  e->rot, e->lq, e->lq - k->q, e->t / 1e9, k->known, k->arr ? "expired" : "active",
		  k->level, k->rot, k->used >> e->level & 1 ? "" : "not");
	for (j = i - 1; j >= 0 && shown < 12; j--)
		shown += evs[j].cpu == cpu && evs[j].type <= EV_MAJOR;
	for (j = j < 0 ? 0 : j; j < i; j++) {
		const struct ev *x = &evs[j];

		if (x->cpu != cpu || x->type > EV_MAJOR)
			continue;
		ktap_diag("    %.6f %-6s pid %d level %d ts %" PRId64 " lq %" PRId64
			  " below %d moved %d idle %d rot %lld", x->t / 1e9, ev_names[x->type],
			  (int)x->pid, x->level, x->ts, x->lq, x->below, x->nr_moved, x->idle, x->rot);
	}
}

static void r4_analyse(struct trk *t, int n, struct r4_stats *st)
{
	int shown = 0;

	for (long i = 0; i < nev; i++) {
		struct ev *e = &evs[i];
		struct trk *k = NULL;
		long refunds0;

		if (e->cpu != cpu)
			continue;
		if (e->type == EV_CLOSE) {
			for (int j = 0; j < n; j++)
				if (t[j].known && !t[j].arr && t[j].level == e->level) {
					if (e->below >= 0)
						t[j].level = e->below;
					else
						t[j].known = 0;
				}
			continue;
		}
		if (e->type == EV_MAJOR) {
			for (int j = 0; j < n; j++) {
				if (e->idle)
					t[j].known = 0;
				else if (t[j].arr)
					t[j].arr = 0;
			}
			continue;
		}
		if (e->type != EV_SLOT && e->type != EV_EXPIRE)
			continue;
		for (int j = 0; j < n; j++)
			if (t[j].pid == e->pid)
				k = &t[j];
		if (!k)
			continue;
		refunds0 = st->refunds;
		if (e->type == EV_EXPIRE) {
			k->arr = 1;
			k->level = e->level;
			continue;
		}
		st->slots++;
		if (i + 1 < nev && evs[i + 1].type == EV_EXPIRE && evs[i + 1].pid == e->pid) {
			/* a slot of the next rotation on the expired array */
			k->known = 1;
			k->arr = 1;
			k->rot = e->rot;
			k->used = k->row | 1ULL << e->level;
			k->level = e->level;
			i++;
			continue;
		}
		if (k->known && !k->arr && k->rot == e->rot && !(k->used >> k->level & 1)) {
			int64_t before = e->lq - k->q;

			/* its slot ended at a level it was moved to */
			st->moved_ends++;
			if (e->level == k->level && before < 0) {
				long j = i + 1;

				st->refunds++;
				/* granted its quota, it stays open if that left it any */
				if (e->lq > 0 && j < nev && evs[j].type == EV_CLOSE &&
				    evs[j].level == e->level && evs[j].t - e->t <= 100 * US_)
					st->refund_closed++;
				if (shown++ < 4)
					ktap_diag("  retake: pid %d at level %d (moved there) took it "
						  "again: level_quota %" PRId64 " = %" PRId64 " before its "
						  "quota %" PRId64 " (t %.6f)", (int)e->pid, e->level, e->lq,
						  before, k->q, e->t / 1e9);
			} else if (e->level != k->level) {
				long j = i + 1;

				if (j < nev && evs[j].type == EV_EXPIRE && evs[j].pid == e->pid)
					j++;
				if (j < nev && evs[j].type == EV_CLOSE && evs[j].level == k->level &&
				    evs[j].t - e->t <= 100 * US_)
					st->closed_together++;
			}
		}
		if (e->lq - k->q < 0 && !k->known) {
			/*
			 * The task's first slot in the trace: where it was queued, and
			 * whether it was moved there, happened before the trace began.
			 */
			st->unknown++;
		} else if (e->lq - k->q < 0) {
			st->neg_before++;
			if (st->refunds == refunds0 && st->unexplained++ < 2)
				r4_show_unexplained(k, i);
		}
		if (!k->known || k->rot != e->rot)
			k->used = k->row;
		k->known = 1;
		k->arr = 0;
		k->rot = e->rot;
		k->used |= 1ULL << e->level;
		k->level = e->level;
	}
}

static void item2(void)
{
	static const struct { int rr, n, nice[3]; } mixes[] = {
		{ 2, 2, { -10, 0 } },
		{ 1, 3, { 0, 0, 0 } },
		{ 1, 3, { 0, 5, 10 } },
	};
	struct ktap_sub s = { 0 };
	struct r4_stats tot = { 0 };

	for (unsigned int m = 0; m < sizeof(mixes) / sizeof(mixes[0]); m++) {
		struct hog_slot *hs = shared_alloc(3 * sizeof(*hs));
		struct r4_stats st = { 0 };
		struct trk t[3];
		pid_t p[3];
		int n = mixes[m].n;

		rr_interval_set_or_bail(mixes[m].rr);
		for (int i = 0; i < n; i++) {
			p[i] = hog(mixes[m].nice[i], &hs[i]);
			memset(&t[i], 0, sizeof(t[i]));
			t[i].pid = p[i];
			t[i].q = rsdl_quota_ns(mixes[m].nice[i], mixes[m].rr);
			t[i].row = rsdl_row(mixes[m].nice[i]);
		}
		hogs_wait_ready(hs, n, 5 * NSEC_PER_SEC);
		tr_start(1UL << cpu);
		sleep_ms(1500);
		tr_stop(1UL << cpu);
		for (int i = 0; i < n; i++)
			kill_child(p[i]);
		munmap(hs, 3 * sizeof(*hs));
		if (!trace_usable(&s, "hog mix"))
			break;
		r4_analyse(t, n, &st);
		ktap_diag("mix %d/%d%s%s at rr %d: %ld slots, %ld ended at a level the task was moved "
			  "to; of those %ld closed the level in the same charge, %ld retook the "
			  "level (granted its quota, %ld of them closed anyway: expected 0); slots "
			  "at a level below 0: %ld (expected: the retakes only), and %ld more as "
			  "a task's first slot in the trace (its place unknown, not judged)",
			  mixes[m].nice[0], mixes[m].nice[1], n > 2 ? "/" : "",
			  n > 2 ? (mixes[m].nice[2] == 10 ? "10" : "0") : "", mixes[m].rr, st.slots,
			  st.moved_ends, st.closed_together, st.refunds, st.refund_closed,
			  st.neg_before, st.unknown);
		tot.slots += st.slots;
		tot.moved_ends += st.moved_ends;
		tot.closed_together += st.closed_together;
		tot.refunds += st.refunds;
		tot.refund_closed += st.refund_closed;
		tot.neg_before += st.neg_before;
	}
	rr_interval_set_or_bail(RR_MS);
	ktap_diag("rule 4: charges that ended a moved task's slot and its level's quota: %ld "
		  "(closed %ld, retaken %ld); retaken but closed %ld (expected 0); slots at an "
		  "exhausted level %ld (expected = retaken %ld)",
		  tot.closed_together + tot.refunds, tot.closed_together, tot.refunds,
		  tot.refund_closed, tot.neg_before, tot.refunds);
	if (have_events && !s.nfail) {
		ktap_expect(&s, tot.neg_before == tot.refunds,
			    "%ld slots taken at a level whose quota had run out, %ld of them "
			    "retakes by the task that ran it out (rule 4 allows only those)",
			    tot.neg_before, tot.refunds);
		ktap_expect(&s, tot.refund_closed == 0,
			    "%ld retaken levels closed in the same charge", tot.refund_closed);
		ktap_expect(&s, tot.closed_together + tot.refunds >= 1,
			    "no charge ended a moved task's slot and its level together: rule 4 "
			    "after rule 3 not exercised");
	}
	ktap_sub_end(&s, "rule4_after_rule3");
}

/* ---- 3. rules 3 and 6 ------------------------------------------------------------------ */

/* rule 6's trials: a slot long enough to outlast two cgroup moves */
#define PLACE_RR_MS 20

enum { K_CTL, K_POLICY, K_CGROUP };

struct r6_trial {
	int64_t t, t0;
	pid_t X, next, other;
	int kind;
};

static char cg_grp[256];

static void cg_cleanup(void)
{
	if (cg_grp[0])
		rmdir(cg_grp);
}

static int cg_setup(void)
{
	if (cg_find_root() || cg_write(cg_root, "cgroup.subtree_control", "+cpu"))
		return -1;
	snprintf(cg_grp, sizeof(cg_grp), "%s/rsdl_edges-%d", cg_root, (int)getpid());
	if (mkdir(cg_grp, 0755) && errno != EEXIST) {
		cg_grp[0] = '\0';
		return -1;
	}
	ktap_on_exit(cg_cleanup);
	return 0;
}

static int cg_move(const char *dir, pid_t pid)
{
	char b[32];

	snprintf(b, sizeof(b), "%d", (int)pid);
	return cg_write(dir, "cgroup.procs", b);
}

/*
 * Rule 3 at the pick: every hog's time_slice followed through the trace, exactly: each
 * charge (sched_stat_runtime, emitted by update_curr_common() for every RSDL charge)
 * takes its runtime off, each rsdl_slot sets it; at every sched_switch to a hog it must
 * be > 0. Consistency: where a slot is taken, the followed value must be <= 0 and the
 * slot's time_slice that value plus whole quotas (an overrun carried).
 */
static void r3_pick_check(struct ktap_sub *s, pid_t *p, int n, int64_t q)
{
	int64_t ts[3] = { 0 }, min_ts = INT64_MAX;
	int known[3] = { 0 };
	long ins = 0, bad = 0, slots = 0, inconsistent = 0;

	for (long i = 0; i < nev; i++) {
		struct ev *e = &evs[i];

		if (e->cpu != cpu)
			continue;
		for (int j = 0; j < n; j++) {
			if (e->type == EV_RUN && e->pid == p[j]) {
				ts[j] -= e->ts;
			} else if (e->type == EV_SLOT && e->pid == p[j]) {
				if (known[j]) {
					/* on the expired array (rsdl_expire follows) time left is dropped */
					int exp = i + 1 < nev && evs[i + 1].type == EV_EXPIRE &&
						  evs[i + 1].pid == p[j];
					int64_t left = exp && ts[j] > 0 ? 0 : ts[j];
					int64_t k = left <= 0 ? -left / q + 1 : 0;

					slots++;
					if (left > 0 || (e->ts != left + k * q && !(exp && e->ts == q))) {
						if (inconsistent++ < 3)
							ktap_diag("  pid %d took a slot with %" PRId64 " ns "
								  "followed, time_slice %" PRId64 " (%.6f)",
								  (int)p[j], ts[j], e->ts, e->t / 1e9);
					}
				}
				known[j] = 1;
				ts[j] = e->ts;
			} else if (e->type == EV_SWITCH && e->pid == p[j] && known[j]) {
				ins++;
				if (ts[j] < min_ts)
					min_ts = ts[j];
				if (ts[j] <= 0 && bad++ < 3)
					ktap_diag("  pid %d switched in with %" PRId64 " ns left (%.6f)",
						  (int)p[j], ts[j], e->t / 1e9);
			}
		}
	}
	ktap_diag("rule 3: %ld switch-ins of the hogs, least time_slice at one %" PRId64 " ns "
		  "(expected > 0); %ld slots taken, %ld not matching the charges (expected 0)", ins,
		  min_ts == INT64_MAX ? 0 : min_ts, slots, inconsistent);
	ktap_expect(s, ins >= 10 && slots >= 10, "only %ld switch-ins and %ld slots of the hogs "
		    "traced", ins, slots);
	ktap_expect(s, inconsistent == 0, "%ld slots do not match the charges traced (the "
		    "followed time_slice is not the kernel's)", inconsistent);
	ktap_expect(s, bad == 0, "%ld switch-ins started a hog with no time left", bad);
}

struct idle_shm {
	volatile int n;
	volatile uint64_t w0[8], w1[8];
	volatile long long tlevel[8], wlevel[8];
};

/* T: 4 times, while W waits below level 39, make itself SCHED_IDLE and back */
static void __attribute__((noreturn)) idle_body(pid_t W, struct hog_slot *ws, struct idle_shm *sh)
{
	for (int k = 0; k < 4; k++) {
		struct rsdl_fields fw, ft;
		int64_t end = now_ns() + 3 * NSEC_PER_SEC;

		for (;;) {
			if (fields(W, &fw) || fields(getpid(), &ft))
				_exit(1);
			if (now_ns() > end) {
				sh->tlevel[k] = ft.level;
				sh->wlevel[k] = fw.level;
				_exit(4);
			}
			if (!fw.array && fw.level < LAST_LEVEL && !ft.array && ft.level < LAST_LEVEL)
				break;
			burn_cpu_ns(300 * US_);
		}
		sh->tlevel[k] = ft.level;
		sh->wlevel[k] = fw.level;
		sh->w0[k] = ws->iters;
		if (set_policy(0, SCHED_IDLE, 0, 0))
			_exit(2);
		sh->w1[k] = ws->iters;
		sh->n = k + 1;
		if (set_policy(0, SCHED_OTHER, 0, 0))
			_exit(3);
	}
	_exit(0);
}

static void item3(void)
{
	struct ktap_sub s = { 0 };
	struct hog_slot *hs = shared_alloc(3 * sizeof(*hs));
	static struct r6_trial tr[150];
	int64_t q = rsdl_quota_ns(0, PLACE_RR_MS);
	/*
	 * Trials of each kind. A cgroup move discriminates (another hog behind the moved one)
	 * in about 4 of 10 (2 to 6 in 5 boots), and >= 2 must: 16 of them.
	 */
	static const int want[3] = { [K_CTL] = 10, [K_POLICY] = 10, [K_CGROUP] = 16 };
	int ntr = 0, cnt[3] = { 0 }, have_cg = !cg_setup();
	uint64_t seed = 7;
	pid_t p[3];

	rr_interval_set_or_bail(PLACE_RR_MS);
	for (int i = 0; i < 3; i++)
		p[i] = hog(0, &hs[i]);
	hogs_wait_ready(hs, 3, 5 * NSEC_PER_SEC);
	sleep_ms(300);
	if (!have_cg)
		ktap_diag("no cgroup2 cpu controller: the place check uses policy changes only");
	tr_start(1UL << cpu);
	for (int k = 0; k < 150 && (cnt[K_CTL] < want[K_CTL] || cnt[K_POLICY] < want[K_POLICY] ||
				    (have_cg && cnt[K_CGROUP] < want[K_CGROUP])); k++) {
		struct rsdl_fields f[3];
		int x = 0, a, b, kind;
		int64_t t0;

		sleep_ns(lcg_range(&seed, 5 * MS_, 20 * MS_));
		for (int i = 1; i < 3; i++)
			if (hs[i].last_ns > hs[x].last_ns)
				x = i;
		if (fields(p[0], &f[0]) || fields(p[1], &f[1]) || fields(p[2], &f[2]))
			break;
		if (f[0].array || f[1].array || f[2].array || f[0].level != f[1].level ||
		    f[1].level != f[2].level)
			continue;
		a = (x + 1) % 3;
		b = (x + 2) % 3;
		if (hs[b].last_ns < hs[a].last_ns) {
			int t = a;

			a = b;
			b = t;
		}
		t0 = now_ns();
		/* the kind furthest from its count */
		kind = want[K_CTL] - cnt[K_CTL] >= want[K_POLICY] - cnt[K_POLICY] ? K_CTL : K_POLICY;
		if (have_cg && want[K_CGROUP] - cnt[K_CGROUP] > want[kind] - cnt[kind])
			kind = K_CGROUP;
		if (kind == K_POLICY &&
		    (set_policy(p[a], SCHED_BATCH, 0, 0) || set_policy(p[a], SCHED_OTHER, 0, 0))) {
			ktap_expect(&s, 0, "NORMAL->BATCH->NORMAL of pid %d failed", (int)p[a]);
			break;
		}
		if (kind == K_CGROUP && (cg_move(cg_grp, p[a]) || cg_move(cg_root, p[a]))) {
			ktap_expect(&s, 0, "cgroup move of pid %d failed", (int)p[a]);
			break;
		}
		tr[ntr++] = (struct r6_trial){ now_ns(), t0, p[x], p[a], p[b], kind };
		cnt[kind]++;
		/* let the changed task run before the next trial (its place is checked up to then) */
		for (uint64_t it = hs[a].iters, n = 0; hs[a].iters == it && n < 40; n++)
			sleep_ms(5);
	}
	sleep_ms(60);
	tr_stop(1UL << cpu);
	for (int i = 0; i < 3; i++)
		kill_child(p[i]);
	if (trace_usable(&s, "place check")) {
		int right[3] = { 0 }, seen[3] = { 0 }, disc[3] = { 0 }, known[3] = { 0 }, arr[3] = { 0 };
		long long lvl[3] = { 0 }, seq[3] = { 0 }, next_seq = 0;
		static const char *const kn[] = { "control (no change)", "NORMAL->BATCH->NORMAL",
						  "cgroup move" };
		static int64_t cp_t[300];
		static int cp_k[300];
		int ncp = 0;
		long i = 0;

		/*
		 * Change points: the end of a control or policy trial (the hogs cannot run
		 * while we change the policy), or each cgroup_attach_task of the moved task (a
		 * cgroup write sleeps in an RCU grace period, and the hogs run meanwhile).
		 */
		for (int k = 0; k < ntr; k++) {
			int found = 0;

			for (long j = 0; tr[k].kind == K_CGROUP && j < nev && ncp < 300; j++)
				if (evs[j].type == EV_ATTACH && evs[j].pid == tr[k].next &&
				    evs[j].t >= tr[k].t0 && evs[j].t <= tr[k].t) {
					cp_t[ncp] = evs[j].t;
					cp_k[ncp++] = k;
					found++;
				}
			if (!found && ncp < 300) {
				cp_t[ncp] = tr[k].t;
				cp_k[ncp++] = k;
			}
		}
		/*
		 * The queues of the hogs' levels, rebuilt from the trace: a slot appends to its
		 * level, a close moves the level's tasks in order to the tail of the level below,
		 * the expired array becomes the active one at a major rotation; a preempted task
		 * keeps its place, and so (rule 6) does a task changed at a change point. From a
		 * change point on, until the changed task has run, every hog switched in must be
		 * the head of the lowest level holding one of them.
		 */
		for (int c = 0, open = -1, bad = 0; i < nev; i++) {
			struct ev *e = &evs[i];

			if (c < ncp && e->t >= cp_t[c]) {
				struct r6_trial *t = &tr[cp_k[c]];
				int w = -1, behind = 0;

				open = -1;	/* an earlier changed task that did not run yet: no result */
				for (int j = 0; j < 3; j++)
					w = p[j] == t->next ? j : w;
				if (w >= 0 && known[0] && known[1] && known[2] && !arr[0] && !arr[1] &&
				    !arr[2]) {
					open = c;
					bad = 0;
					for (int j = 0; j < 3; j++)
						behind += j != w && lvl[j] == lvl[w] && seq[j] > seq[w];
					cp_k[c] |= behind ? 1 << 16 : 0;	/* w had a hog behind it */
				}
				c++;
				i--;
				continue;
			}
			if (e->cpu != cpu)
				continue;
			if (e->type == EV_CLOSE) {
				for (long long sq = 0; sq <= next_seq && e->below >= 0; sq++)
					for (int j = 0; j < 3; j++)
						if (known[j] && !arr[j] && lvl[j] == e->level && seq[j] == sq) {
							lvl[j] = e->below;
							seq[j] = ++next_seq;
						}
			} else if (e->type == EV_MAJOR) {
				for (int j = 0; j < 3; j++)
					arr[j] = 0;
			} else if (e->type == EV_SLOT) {
				for (int j = 0; j < 3; j++)
					if (e->pid == p[j]) {
						known[j] = 1;
						lvl[j] = e->level;
						seq[j] = ++next_seq;
						arr[j] = i + 1 < nev && evs[i + 1].type == EV_EXPIRE &&
							 evs[i + 1].pid == p[j];
					}
			} else if (e->type == EV_SWITCH && open >= 0 &&
				   (e->pid == p[0] || e->pid == p[1] || e->pid == p[2])) {
				struct r6_trial *t = &tr[cp_k[open] & 0xffff];
				int h = -1;

				for (int j = 0; j < 3; j++)
					if (!arr[j] && (h < 0 || lvl[j] < lvl[h] ||
							(lvl[j] == lvl[h] && seq[j] < seq[h])))
						h = j;
				if (h >= 0 && e->pid != p[h] && bad++ < 1)
					ktap_diag("  %s of pid %d: pid %d ran while pid %d was the head of level "
						  "%lld (%.6f)", kn[t->kind], (int)t->next, (int)e->pid,
						  (int)p[h], lvl[h], e->t / 1e9);
				if (e->pid == t->next) {
					seen[t->kind]++;
					right[t->kind] += !bad;
					disc[t->kind] += t->kind != K_CTL && (cp_k[open] >> 16);
					open = -1;
				}
			}
		}
		for (int kd = 0; kd < 3; kd++)
			if (kd != K_CGROUP || have_cg)
				ktap_diag("rule 6: %s: each hog switched in was the head, up to the changed "
					  "task's turn, in %d of %d (expected all; %d of them changed a task "
					  "that had another hog behind it)", kn[kd], right[kd], seen[kd],
					  disc[kd]);
		ktap_expect(&s, seen[K_CTL] >= 3 && right[K_CTL] == seen[K_CTL],
			    "control trials: the predicted head ran in %d of %d", right[K_CTL], seen[K_CTL]);
		ktap_expect(&s, disc[K_POLICY] >= 3 && right[K_POLICY] == seen[K_POLICY],
			    "policy change of a waiting task: its place kept in %d of %d (%d "
			    "discriminating)", right[K_POLICY], seen[K_POLICY], disc[K_POLICY]);
		if (have_cg)
			ktap_expect(&s, disc[K_CGROUP] >= 2 && right[K_CGROUP] == seen[K_CGROUP],
				    "cgroup move of a waiting task: its place kept in %d of %d (%d "
				    "discriminating)", right[K_CGROUP], seen[K_CGROUP], disc[K_CGROUP]);
	}
	if (trace_usable(&s, "pick check"))
		r3_pick_check(&s, p, 3, q);

	/* a running task queued again after an attribute change behind another */
	{
		struct idle_shm *sh = shared_alloc(sizeof(*sh));
		pid_t W = hog(0, &hs[0]), T;
		int st, ok = 0;

		hogs_wait_ready(hs, 1, 5 * NSEC_PER_SEC);
		T = fork_child();
		if (T == 0)
			idle_body(W, &hs[0], sh);
		st = reap_child(T);
		kill_child(W);
		for (int k = 0; k < sh->n; k++) {
			ktap_diag("SCHED_IDLE by the running task at level %lld, other task waiting at "
				  "level %lld: it ran %llu loop passes during the call (expected > 0: "
				  "the caller is rescheduled)", sh->tlevel[k], sh->wlevel[k],
				  (unsigned long long)(sh->w1[k] - sh->w0[k]));
			ok += sh->w1[k] > sh->w0[k];
		}
		ktap_expect(&s, sh->n == 4 && WIFEXITED(st) && !WEXITSTATUS(st),
			    "the SCHED_IDLE task ended early (%d trials, status %d)", sh->n, st);
		ktap_expect(&s, ok == sh->n, "%d of %d: the task that made itself SCHED_IDLE kept "
			    "the CPU although another waited at a lower level", sh->n - ok, sh->n);
		munmap(sh, sizeof(*sh));
	}
	munmap(hs, 3 * sizeof(*hs));
	rr_interval_set_or_bail(RR_MS);
	ktap_sub_end(&s, "rule3_6_pick_and_place");
}

/* ---- 4. rule 8 ----------------------------------------------------------------------- */

/*
 * Parent and hog both nice 19 (one slot, level 20) at rr 100: the parent's slot holds its
 * three /proc reads (~7 ms each) and fork() (~10 ms) with room to spare, and a rotation is
 * two slots.
 */
#define FORK_RR_MS 100
#define FORK_LEVEL 20
/*
 * Timed forks come in rounds until one parent's slot ends in task_fork's charge. A tick
 * (1 ms on the lab's debug kernel) between the slot's end and that charge ends it first,
 * and fork()'s own CPU time varies by ~0.8 ms: 0 to 3 of 9 hit in each of 7 boots.
 */
#define FORK_PER_ROUND 9
#define FORK_ROUNDS 6

struct fork_rec {
	int variant;	/* 0: right after sched_yield(), 1: timed to its slot's end */
	pid_t parent, child;
	int64_t t0, t1, e_end, gamma;	/* timed: the slot's end (CPU time), the offset */
	struct rsdl_fields pb, c, pa;
};

struct fork_shm {
	volatile int n, stage;
	volatile int64_t F;	/* time from calling fork() to the parent's charge in task_fork */
	struct fork_rec r[5 + FORK_PER_ROUND * FORK_ROUNDS];
};

static void fork_one(struct fork_shm *sh, int variant, const struct rsdl_fields *pb,
		     int64_t e_end, int64_t gamma)
{
	struct fork_rec *r = &sh->r[sh->n];
	int pfd[2];
	pid_t c;

	if (pipe(pfd))
		_exit(2);
	r->variant = variant;
	r->parent = getpid();
	r->pb = *pb;
	r->e_end = e_end;
	r->gamma = gamma;
	r->t0 = now_ns();
	c = fork();
	if (c == 0) {
		char x;

		close(pfd[1]);
		if (read(pfd[0], &x, 1) < 0)
			_exit(1);
		_exit(0);
	}
	if (c < 0)
		_exit(3);
	rsdl_fields_read(c, &r->c, NULL);
	rsdl_fields_read(getpid(), &r->pa, NULL);
	r->t1 = now_ns();
	r->child = c;
	sh->n++;
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * The parent: 5 forks right after sched_yield(); then, for each 'g' read from @gfd, a
 * round of forks timed so that task_fork's charge (F of CPU time after calling fork(),
 * measured by the controller in the first ones) comes 150, 300 or 450 us after its slot's
 * end (its slot began at a gap, so it ends one quota after the previous slot's end): when
 * no tick falls in between, the slot ends in that very charge. A byte on @dfd reports each
 * round done.
 */
static void __attribute__((noreturn)) forker_body(struct fork_shm *sh, int gfd, int dfd)
{
	static const int64_t gamma[] = { 150 * US_, 300 * US_, 450 * US_ };
	int64_t q = rsdl_quota_ns(19, FORK_RR_MS), F, lo, hi;
	struct rsdl_fields f;
	char go;

	if (set_policy(0, SCHED_OTHER, 19, 0))
		_exit(1);
	for (int k = 0; k < 5; k++) {
		sched_yield();		/* beside the hog: it expires and waits for the next rotation */
		if (rsdl_fields_read(getpid(), &f, NULL))
			_exit(1);
		fork_one(sh, 0, &f, 0, 0);
	}
	sh->stage = 1;
	while (read(gfd, &go, 1) == 1 && go == 'g') {
		F = sh->F;
		for (int k = 0; F > 0 && k < FORK_PER_ROUND; k++) {
			wait_gap(&lo, &hi, 3 * MS_);	/* a slot began: it ends in (lo, hi] + q */
			memset(&f, 0, sizeof(f));
			f.level = FORK_LEVEL;
			f.time_slice = q - (hi - lo) / 2;
			f.rotation = -1;
			spin_exec(lo + q - F + gamma[k % 3]);
			fork_one(sh, 1, &f, lo + q, gamma[k % 3]);
		}
		if (write(dfd, "d", 1) != 1)
			_exit(4);
	}
	_exit(0);
}

/* The parent's charges and expiry from fork() to sched_process_fork, to explain a miss */
static void fork_charges_diag(const struct fork_rec *r, int64_t tfork, int64_t F)
{
	char buf[512] = "";
	int len = 0;

	for (long j = 0; j < nev && len < (int)sizeof(buf) - 32; j++) {
		const struct ev *e = &evs[j];

		if (e->t < r->t0 || e->t > tfork || e->pid != r->parent ||
		    (e->type != EV_RUN && e->type != EV_EXPIRE))
			continue;
		len += snprintf(buf + len, sizeof(buf) - len, " %s+%.0f%c",
				e->type == EV_RUN ? "charge" : "EXPIRE", (e->t - r->t0) / 1e3, e->irq);
	}
	ktap_diag("  slot's end aimed at +%.0f us after fork(), sched_process_fork at +%.0f us; "
		  "the parent's charges (h: tick, .: task) before it:%s", (F - r->gamma) / 1e3,
		  (tfork - r->t0) / 1e3, buf);
}

/* Check the forks sh->r[from..to) against the trace of their window */
static void check_forks(struct ktap_sub *s, struct fork_shm *sh, int from, int to, int64_t q,
			int *ny, int *nx, int *nx_fork, int *rot_differs)
{
	for (int i = from; i < to; i++) {
		struct fork_rec *r = &sh->r[i];
		int in_fork = 0, at_task_fork = 0, slots = 0;
		int64_t tfork = 0, tout = INT64_MAX;

		ktap_diag("%s fork %d: parent before: level %lld time_slice %lld rotation %lld; child: "
			  "level %lld time_slice %lld rotation %lld, ran %lld ns; parent after: level "
			  "%lld time_slice %lld rotation %lld", r->variant ? "timed" : "yielded", i,
			  r->pb.level, r->pb.time_slice, r->pb.rotation, r->c.level, r->c.time_slice,
			  r->c.rotation, r->c.sum_exec, r->pa.level, r->pa.time_slice, r->pa.rotation);
		if (r->c.sum_exec) {
			ktap_diag("  not usable: the child ran before it was read");
			continue;
		}
		if (have_events) {
			for (long j = 0; j < nev; j++) {
				struct ev *e = &evs[j];

				if (e->type == EV_FORK && e->pid == r->child)
					tfork = e->t;
				if (e->type == EV_SWITCH && e->prev == r->parent && e->t >= r->t0 &&
				    e->t < tout)
					tout = e->t;
			}
			for (long j = 0; j < nev; j++) {
				struct ev *e = &evs[j];

				if (e->type == EV_EXPIRE && e->pid == r->parent && e->t >= r->t0 &&
				    tfork && e->t <= tfork) {
					in_fork = 1;
					/* in task context and before any switch-out: task_fork's charge */
					at_task_fork |= e->irq == '.' && e->t <= tout;
				}
				if (e->type == EV_SLOT && e->pid == r->child && e->t >= r->t0 &&
				    e->t <= r->t1)
					slots++;
			}
			ktap_expect(s, slots == 0, "fork %d: the child took %d slots of its own at fork "
				    "(a fresh entitlement)", i, slots);
		}
		ktap_expect(s, r->c.time_slice > 0 && 2 * r->c.time_slice <= q,
			    "fork %d: child time_slice %lld, expected > 0 and <= half a quota %" PRId64,
			    i, r->c.time_slice, q / 2);
		if (!r->variant) {
			(*ny)++;
			ktap_expect(s, 2 * r->c.time_slice <= r->pb.time_slice,
				    "yielded fork %d: child time_slice %lld > half the parent's %lld", i,
				    r->c.time_slice, r->pb.time_slice);
			if (r->pa.level == r->pb.level && r->pa.rotation == r->pb.rotation)
				ktap_expect(s, r->c.time_slice + r->pa.time_slice <= r->pb.time_slice,
					    "yielded fork %d: child %lld + parent after %lld > parent "
					    "before %lld", i, r->c.time_slice, r->pa.time_slice,
					    r->pb.time_slice);
			ktap_expect(s, r->c.level == r->pb.level && r->c.rotation == r->pb.rotation,
				    "yielded fork %d: child level %lld rotation %lld, the parent's %lld "
				    "%lld", i, r->c.level, r->c.rotation, r->pb.level, r->pb.rotation);
			continue;
		}
		if (have_events && tfork)
			fork_charges_diag(r, tfork, sh->F);
		ktap_diag("  task_fork's charge aimed %+.0f us after the slot's end: the parent "
			  "expired inside fork(): %s, in task_fork's charge: %s; child rotation %lld, the "
			  "parent's %lld", r->gamma / 1e3, in_fork ? "yes" : "no",
			  at_task_fork ? "yes" : "no", r->c.rotation, r->pa.rotation);
		if (!in_fork)
			continue;
		(*nx)++;
		if (!at_task_fork)
			continue;
		/* the parent was entitled in the next rotation when its child was split off */
		(*nx_fork)++;
		*rot_differs += r->c.rotation != r->pa.rotation;
		if (r->pa.level == r->c.level)
			ktap_expect(s, r->c.time_slice + r->pa.time_slice <= q,
				    "timed fork %d: child %lld + parent after %lld > one quota %" PRId64,
				    i, r->c.time_slice, r->pa.time_slice, q);
		ktap_expect(s, r->c.rotation >= r->pa.rotation,
			    "timed fork %d: child entitled in rotation %lld, before its parent (%lld)",
			    i, r->c.rotation, r->pa.rotation);
	}
}

static void item4(void)
{
	struct ktap_sub s = { 0 };
	struct fork_shm *sh = shared_alloc(sizeof(*sh));
	struct hog_slot *hs = shared_alloc(sizeof(*hs));
	int64_t q = rsdl_quota_ns(19, FORK_RR_MS), F[8];
	int ny = 0, nx = 0, nx_fork = 0, rot_differs = 0, nf = 0, gfd[2], dfd[2], ny_end;
	int rounds = 0;
	pid_t H, P;

	rr_interval_set_or_bail(FORK_RR_MS);
	H = hog(19, hs);
	hogs_wait_ready(hs, 1, 5 * NSEC_PER_SEC);
	/* after the hog: only the parent may hold the other ends, so either end sees EOF */
	if (pipe(gfd) || pipe(dfd))
		ktap_bail("pipe: %s", strerror(errno));
	sleep_ms(300);
	tr_start(1UL << cpu);
	P = fork_child();
	if (P == 0) {
		close(gfd[1]);
		close(dfd[0]);
		forker_body(sh, gfd[0], dfd[1]);
	}
	close(gfd[0]);
	close(dfd[1]);
	for (int64_t end = now_ns() + 20 * NSEC_PER_SEC; !sh->stage && now_ns() < end;)
		sleep_ms(20);
	tr_stop(1UL << cpu);
	ny_end = sh->n;
	if (have_events)
		trace_usable(&s, "yielded forks");
	check_forks(&s, sh, 0, ny_end, q, &ny, &nx, &nx_fork, &rot_differs);
	/*
	 * F: CPU time from calling fork() to task_fork's charge, the parent's last charge in
	 * task context before sched_process_fork, less the time it was switched out
	 */
	for (int i = 0; i < ny_end && have_events; i++) {
		struct fork_rec *r = &sh->r[i];
		int64_t tf = 0, tfork = 0, out = 0, off = 0;

		for (long j = 0; j < nev && !tfork; j++) {
			struct ev *e = &evs[j];

			if (e->t < r->t0 || e->t > r->t1)
				continue;
			if (e->type == EV_RUN && e->pid == r->parent && e->irq == '.')
				tf = e->t;
			if (e->type == EV_FORK && e->pid == r->child)
				tfork = e->t;
		}
		for (long j = 0; j < nev && tf; j++) {
			struct ev *e = &evs[j];

			if (e->t < r->t0 || e->t > tf || e->type != EV_SWITCH)
				continue;
			if (e->prev == r->parent)
				off = e->t;
			else if (e->pid == r->parent && off) {
				out += e->t - off;
				off = 0;
			}
		}
		if (tf && tfork)
			F[nf++] = tf - r->t0 - out;
	}
	if (nf) {
		qsort(F, nf, sizeof(F[0]), cmp_i64);
		sh->F = F[nf / 2];
		ktap_diag("fork() to task_fork's charge (CPU time): median %.0f us, %.0f..%.0f us over "
			  "%d forks", F[nf / 2] / 1e3, F[0] / 1e3, F[nf - 1] / 1e3, nf);
	}
	/* rounds of timed forks, each traced and checked, until one ends in task_fork's charge */
	for (char done; rounds < FORK_ROUNDS && nf && !nx_fork; rounds++) {
		int from = sh->n;

		tr_start(1UL << cpu);
		if (write(gfd[1], "g", 1) != 1)
			ktap_bail("pipe write: %s", strerror(errno));
		if (read(dfd[0], &done, 1) != 1)
			ktap_bail("the forking parent ended in round %d", rounds + 1);
		tr_stop(1UL << cpu);
		if (have_events)
			trace_usable(&s, "timed forks");
		check_forks(&s, sh, from, sh->n, q, &ny, &nx, &nx_fork, &rot_differs);
	}
	close(gfd[1]);
	reap_child(P);
	kill_child(H);
	close(dfd[0]);
	ktap_diag("rule 8: %d forks right after sched_yield(); %d timed forks in %d rounds of up to "
		  "%d, %d in which the "
		  "parent expired, %d of them in task_fork's charge (the split of an expired parent); "
		  "child rotation != the parent's in %d of those", ny, sh->n - ny_end, rounds,
		  FORK_PER_ROUND, nx, nx_fork, rot_differs);
	ktap_expect(&s, ny >= 3, "only %d usable forks after sched_yield()", ny);
	ktap_expect(&s, nx_fork >= 1, "no fork whose parent's last slot ended in task_fork's charge "
		    "(%d expired elsewhere inside fork())", nx);
	rr_interval_set_or_bail(RR_MS);
	munmap(sh, sizeof(*sh));
	munmap(hs, sizeof(*hs));
	ktap_sub_end(&s, "rule8_fork_of_yielded_or_expired_parent");
}

/* ---- 5. rules 1 and 2: overruns ------------------------------------------------------- */

#define OVR_SAMPLES 24
#define OVR_READS 6

struct ovr_sample {
	long long rotation;	/* the CPU's */
	struct dlevel lv[RSDL_LEVELS];
};

struct ovr_shm {
	volatile int n;
	struct ovr_sample s[OVR_SAMPLES][OVR_READS];
};

/*
 * Long charges: reading debugfs sched/rsdl prints each CPU under its runqueue lock with
 * interrupts off, delaying the tick by up to ~0.45 ms on the lab's debug kernel (more the
 * more levels are listed), so the tick after it charges up to ~1.45 ms at once: more than
 * a quota at rr 1 when the slot had less than that left.
 * Nice 0, alone: each sample sleeps 2 ms (the idle CPU ends the rotation: it starts afresh
 * with no other task's quota in the levels), runs 0.3..0.85 ms into its first slot, then
 * reads debugfs 6 times (~14 ms of its 20 ms rotation); each read is a snapshot in which
 * it is the one queued task, so every level below its level is final there.
 * Nice 19 (one slot), beside a nice 19 and a nice 0 hog: after each gap (its slot ended,
 * the others ran) it reads debugfs 30 us before its next slot ends.
 */
static void __attribute__((noreturn)) overrunner_body(int nice, struct ovr_shm *sh)
{
	static struct dcpu d[MAXCPU];
	int64_t q = rsdl_quota_ns(nice, 1), lo, hi;

	if (set_policy(0, SCHED_OTHER, nice, 0))
		_exit(1);
	for (int k = 0; k < OVR_SAMPLES; k++) {
		if (nice) {
			wait_gap(&lo, &hi, q / 2);
			spin_exec(lo + q - 30 * US_);
			dbg_read(d, MAXCPU);
		} else {
			sleep_ms(2);
			spin_exec(thread_cpu_ns() + (300 + (k % 4) * 180) * US_);
			for (int j = 0; j < OVR_READS; j++) {
				dbg_read(d, MAXCPU);
				sh->s[k][j].rotation = d[cpu].rotation;
				memcpy(sh->s[k][j].lv, d[cpu].lv[0], sizeof(sh->s[k][j].lv));
			}
		}
		sh->n = k + 1;
	}
	_exit(0);
}

static pid_t run_overrunner(int nice, struct ovr_shm *sh)
{
	pid_t W;

	memset(sh, 0, sizeof(*sh));
	W = fork_child();
	if (W == 0)
		overrunner_body(nice, sh);
	reap_child(W);
	return W;
}

static void item5(void)
{
	struct ktap_sub s = { 0 };
	struct ovr_shm *sh = shared_alloc(sizeof(*sh));
	struct hog_slot *hs = shared_alloc(2 * sizeof(*hs));
	int64_t q = rsdl_quota_ns(0, 1);
	uint64_t row0 = rsdl_row(0);
	int skipped = 0, phantom = 0, valid = 0, overran = 0, skips = 0, reads = 0;
	pid_t W, H[2];

	rr_interval_set_or_bail(1);
	/* nice 0 alone: an overrun longer than a quota uses slots up */
	tr_start(1UL << cpu);
	W = run_overrunner(0, sh);
	tr_stop(1UL << cpu);
	for (int k = 0; k < sh->n; k++)
		for (int j = 0; j < OVR_READS; j++) {
			struct ovr_sample *o = &sh->s[k][j];
			int lw = -1, queued = 0;

			for (int l = 0; l < RSDL_LEVELS; l++)
				if (o->lv[l].queued) {
					lw = l;
					queued += (int)o->lv[l].queued;
				}
			if (queued != 1)
				continue;	/* another task queued: not its level for sure */
			valid++;
			for (int l = 0; l < lw; l++) {
				struct dlevel *v = &o->lv[l];

				if (!rsdl_level_usable(row0, l))
					continue;
				if (!v->present) {
					skipped++;
				} else if (v->quota == q && !v->closed) {
					skipped++;
					if (phantom++ < 4)
						ktap_diag("  sample %d read %d: level %d, below its level %d, "
							  "holds %lld ns (a quota nobody ran at)", k, j, l, lw,
							  v->quota);
				}
			}
		}
	ktap_diag("nice 0 alone, rr 1: %d debugfs snapshots with it the one queued task; usable "
		  "levels below its level it never ran at (used up by an overrun): %d, of them "
		  "holding a quota (quota_ns == %" PRId64 ", not closed): %d (expected 0)", valid,
		  skipped, q, phantom);
	ktap_expect(&s, phantom == 0, "%d levels used up by an overrun hold a quota", phantom);
	ktap_expect(&s, skipped >= 1, "no snapshot shows a level used up by an overrun (%d usable "
		    "snapshots)", valid);
	if (trace_usable(&s, "nice 0 overruns")) {
		int64_t ts = 0;
		int known = 0;

		/* its time_slice followed through its charges: k slots taken at once = k - 1 skipped */
		for (long i = 0; i < nev; i++) {
			struct ev *e = &evs[i];
			int exp, same_t = 0;
			int64_t k;

			if (e->pid != W || e->cpu != cpu)
				continue;
			if (e->type == EV_RUN) {
				ts -= e->ts;
				continue;
			}
			if (e->type != EV_SLOT)
				continue;
			exp = i + 1 < nev && evs[i + 1].type == EV_EXPIRE && evs[i + 1].pid == W;
			k = known && ts <= 0 ? (e->ts - ts) / q : 0;
			if (!exp && k >= 2 && e->ts - ts == k * q) {
				for (long m = i; m < nev && evs[m].t == e->t; m++)
					same_t += evs[m].type == EV_SLOT && evs[m].pid == W;
				if (skips++ < 4)
					ktap_diag("  overrun of %" PRId64 " ns: %" PRId64 " slots used, queued at "
						  "level %d with time_slice %" PRId64 ", level_quota %" PRId64
						  " (%d rsdl_slot)", -ts, k, e->level, e->ts, e->lq, same_t);
				ktap_expect(&s, same_t == 1 && e->lq >= q && e->ts > 0 && e->ts <= q,
					    "overrun of %" PRId64 " ns: %d rsdl_slot events, time_slice %"
					    PRId64 ", level_quota %" PRId64 " (expected one slot funded with %"
					    PRId64 ")", -ts, same_t, e->ts, e->lq, q);
			}
			known = 1;
			ts = e->ts;
		}
		ktap_diag("overruns longer than a quota (followed through the charges): %d (need >= 1); "
			  "each one rsdl_slot, funded with one quota", skips);
		ktap_expect(&s, skips >= 1, "no overrun longer than a quota");
	}

	/*
	 * nice 19 (one slot of 1 ms) beside a nice 19 and a nice 0 hog: whole-rotation
	 * overruns, 2 to 5 per 24 reads in 5 boots; up to 3 batches until one is seen
	 */
	H[0] = hog(19, &hs[0]);
	H[1] = hog(0, &hs[1]);
	hogs_wait_ready(hs, 2, 5 * NSEC_PER_SEC);
	for (int b = 0; b < 3 && !overran; b++) {
		tr_start(1UL << cpu);
		W = run_overrunner(19, sh);
		tr_stop(1UL << cpu);
		if (!trace_usable(&s, "nice 19 overruns"))
			break;
		reads += sh->n;
		for (long i = 0; i + 1 < nev; i++) {
			struct ev *e = &evs[i];

			if (e->type != EV_SLOT || e->pid != W || e->cpu != cpu || e->ts != q ||
			    evs[i + 1].type != EV_EXPIRE || evs[i + 1].pid != e->pid)
				continue;
			if (overran++ < 4)
				ktap_diag("  whole-rotation overrun: rsdl_slot level %d time_slice %" PRId64
					  " level_quota %" PRId64, e->level, e->ts, e->lq);
			ktap_expect(&s, e->level == 20 && e->lq >= q, "whole-rotation overrun: queued "
				    "at level %d with level_quota %" PRId64 ", expected level 20 (its "
				    "row's last) and >= %" PRId64, e->level, e->lq, q);
		}
	}
	kill_child(H[0]);
	kill_child(H[1]);
	ktap_diag("nice 19, rr 1: %d whole-rotation overruns (rsdl_slot time_slice == quota, then "
		  "rsdl_expire) in %d debugfs reads (need >= 1), each queued at level 20 with "
		  "level_quota >= quota", overran, reads);
	ktap_expect(&s, overran >= 1, "no whole-rotation overrun in %d reads", reads);
	rr_interval_set_or_bail(RR_MS);
	munmap(sh, sizeof(*sh));
	munmap(hs, 2 * sizeof(*hs));
	ktap_sub_end(&s, "rule1_2_overrun_funding");
}

/* ---- 7. rule 13 ----------------------------------------------------------------------- */

static long config_hz(void)
{
	FILE *f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	char line[256];
	long hz = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CONFIG_HZ=", 10))
			hz = atol(line + 10);
	pclose(f);
	return hz;
}

static void item7(long hz)
{
	struct ktap_sub s = { 0 };
	int rr = rr_interval_get();
	int64_t tick = NSEC_PER_SEC / hz;
	int floor_ms = (int)((tick + MS_ - 1) / MS_);
	char b[16];
	ssize_t r;

	if (floor_ms < 1)
		floor_ms = 1;
	ktap_diag("rr_interval %d ms = %lld ns, tick %lld ns (CONFIG_HZ=%ld): expected "
		  "rr_interval * 1e6 >= tick", rr, (long long)rr * MS_, (long long)tick, hz);
	ktap_expect(&s, rr > 0 && (int64_t)rr * MS_ >= tick, "rr_interval %d ms is below the tick "
		    "%" PRId64 " ns", rr, tick);
	rr_interval_set_or_bail(RR_MS);
	snprintf(b, sizeof(b), "%d", floor_ms - 1);
	r = write_file(RR_INTERVAL_PATH, b);
	ktap_diag("write %d (one ms below the floor of %d ms): %s, rr_interval now %d (expected "
		  "EINVAL, 6)", floor_ms - 1, floor_ms, r < 0 ? strerror((int)-r) : "accepted",
		  rr_interval_get());
	ktap_expect(&s, r == -EINVAL && rr_interval_get() == RR_MS,
		    "write of %d ms below the floor: %s, rr_interval %d", floor_ms - 1,
		    r < 0 ? strerror((int)-r) : "accepted", rr_interval_get());
	rr_interval_set_or_bail(RR_MS);
	ktap_sub_end(&s, "rule13_rr_floor");
}

/* ---- 9. trace events ------------------------------------------------------------------- */

static void item9(void)
{
	static const char *const names[] = { "rsdl:rsdl_slot", "rsdl:rsdl_level_close",
					     "rsdl:rsdl_expire", "rsdl:rsdl_major_rotation" };
	static const int types[] = { EV_SLOT, EV_CLOSE, EV_EXPIRE, EV_MAJOR };
	struct ktap_sub s = { 0 };
	struct hog_slot *hs = shared_alloc(2 * sizeof(*hs));
	int listed[4] = { 0 };
	char line[512];
	pid_t h[2];
	FILE *f;

	f = popen("perf list 'rsdl:*' 2>&1", "r");
	while (f && fgets(line, sizeof(line), f))
		for (int i = 0; i < 4; i++) {
			char *p = strstr(line, names[i]);

			if (p && (p[strlen(names[i])] == ' ' || p[strlen(names[i])] == '\n') &&
			    strstr(line, "Tracepoint"))
				listed[i] = 1;
		}
	if (f)
		pclose(f);
	for (int i = 0; i < 4; i++) {
		ktap_diag("perf list 'rsdl:*': %s %s", names[i], listed[i] ? "listed" : "missing");
		ktap_expect(&s, listed[i], "perf list does not name %s", names[i]);
	}
	h[0] = hog(0, &hs[0]);
	h[1] = hog(0, &hs[1]);
	hogs_wait_ready(hs, 2, 5 * NSEC_PER_SEC);
	tr_start(1UL << cpu);
	sleep_ms(600);
	tr_stop(1UL << cpu);
	kill_child(h[0]);
	kill_child(h[1]);
	for (int i = 0; i < 4; i++) {
		long n = count_ev(types[i], cpu);

		ktap_diag("2 nice 0 hogs, 600 ms (2.5 rotations of 2 x 120 ms): %s fired %ld times "
			  "(expected >= 1)", names[i], n);
		ktap_expect(&s, n >= 1, "%s did not fire under two hogs%s", names[i],
			    have_events ? "" : " (no rsdl events in this kernel)");
	}
	munmap(hs, 2 * sizeof(*hs));
	ktap_sub_end(&s, "trace_events");
}

/* ---- 6. rule 12 (--smp) ------------------------------------------------------------------ */

struct f1_shm {
	volatile int seq, running, release;
};

/* SCHED_FIFO helper on the source CPU: holds it from a poke to its release */
static void __attribute__((noreturn)) f1_body(int rfd, struct f1_shm *sh)
{
	int v;

	while (read(rfd, &v, sizeof(v)) == sizeof(v)) {
		sh->running = v;
		while (sh->release != v)
			__asm__ __volatile__("" ::: "memory");
	}
	_exit(0);
}

static void item6(int src, int dst)
{
	struct ktap_sub s = { 0 };
	struct hog_slot *hs = shared_alloc(2 * sizeof(*hs));
	struct f1_shm *fsh = shared_alloc(sizeof(*fsh));
	struct task_cfg c1 = { .cpu = src, .policy = SCHED_OTHER, .nice = 0 };
	static struct dcpu d1[MAXCPU], d2[MAXCPU];
	int64_t tmove[48] = { 0 };
	long long lvl[48];
	pid_t S1, M, F;
	int pfd[2], nm = 0, clamp = 0, valid = 0;

	S1 = spawn_hog(&c1, &hs[0], HOG_COUNT, 60 * NSEC_PER_SEC);
	M = spawn_hog(&c1, &hs[1], HOG_COUNT, 60 * NSEC_PER_SEC);
	if (pipe(pfd))
		ktap_bail("pipe: %s", strerror(errno));
	F = fork_child();
	if (F == 0) {
		close(pfd[1]);
		if (set_policy(0, SCHED_FIFO, 60, 0) || pin_self(src))
			_exit(1);
		f1_body(pfd[0], fsh);
	}
	close(pfd[0]);
	hogs_wait_ready(hs, 2, 5 * NSEC_PER_SEC);
	sleep_ms(200);
	tr_start(1UL << src | 1UL << dst);
	/* 12 moves, more (up to 48) until one found its level holding less than its time */
	for (int k = 1; k <= 48 && (nm < 12 || !clamp); k++) {
		struct rsdl_fields mb, ma;
		int64_t end;
		int arr;

		sleep_ms(15 + (k * 7) % 31);
		/* every other move, wait until M runs: the level then may hold less than its time */
		for (end = now_ns() + 50 * MS_; k % 2 && now_ns() < end && now_ns() - hs[1].last_ns > 300 * US_;)
			sleep_ns(100 * US_);
		fsh->release = 0;
		if (write(pfd[1], &k, sizeof(k)) != sizeof(k))
			break;
		for (end = now_ns() + 200 * MS_; fsh->running != k && now_ns() < end;)
			sleep_ns(50 * US_);
		if (fsh->running != k) {
			ktap_expect(&s, 0, "the FIFO helper did not take CPU %d", src);
			break;
		}
		if (fields(M, &mb) || dbg_read(d1, MAXCPU))
			break;
		tmove[nm] = now_ns();
		if (pin_pid(M, dst)) {
			fsh->release = k;
			ktap_expect(&s, 0, "sched_setaffinity(%d, {%d}) failed", (int)M, dst);
			break;
		}
		dbg_read(d2, MAXCPU);
		fields(M, &ma);
		fsh->release = k;
		lvl[nm] = ma.level;
		nm++;
		arr = (int)mb.array;
		if (d2[src].rotation != d1[src].rotation || mb.array != 0 || ma.array != 0) {
			ktap_diag("move %d: not compared (rotation on CPU %d %lld -> %lld, array %lld -> "
				  "%lld)", k, src, d1[src].rotation, d2[src].rotation, mb.array, ma.array);
		} else {
			long long qb = d1[src].lv[arr][mb.level].quota, qa = d2[src].lv[arr][mb.level].quota;
			long long held = qb > 0 ? qb : 0, ts = mb.time_slice > 0 ? mb.time_slice : 0;
			long long want = qb - (ts < held ? ts : held);
			long long db = d1[dst].lv[0][ma.level].quota, da = d2[dst].lv[0][ma.level].quota;

			valid++;
			clamp += ts > held;
			ktap_diag("move %d: time %lld ns at level %lld: CPU %d level quota %lld -> %lld "
				  "(expected %lld); CPU %d level %lld quota %lld -> %lld (expected "
				  "%lld); level %lld -> %lld, time %lld -> %lld (expected kept)", k,
				  mb.time_slice, mb.level, src, qb, qa, want, dst, ma.level, db, da,
				  db + ts, mb.level, ma.level, mb.time_slice, ma.time_slice);
			ktap_expect(&s, qa == want, "move %d: source level quota %lld -> %lld, expected "
				    "%lld (its time %lld, never more than the level held)", k, qb, qa,
				    want, ts);
			ktap_expect(&s, qb < 0 || qa >= 0, "move %d: the departure took the source level "
				    "below 0 (%lld -> %lld)", k, qb, qa);
			ktap_expect(&s, da == db + ts, "move %d: destination level quota %lld -> %lld, "
				    "expected + its time %lld", k, db, da, ts);
			ktap_expect(&s, ma.level == mb.level && ma.time_slice == mb.time_slice,
				    "move %d: level %lld -> %lld, time %lld -> %lld (expected kept)", k,
				    mb.level, ma.level, mb.time_slice, ma.time_slice);
		}
		sleep_ms(20);	/* M runs alone on the destination */
		if (pin_pid(M, src))
			break;
	}
	close(pfd[1]);
	tr_stop(1UL << src | 1UL << dst);
	kill_child(F);
	kill_child(S1);
	kill_child(M);
	ktap_diag("rule 12: %d moves compared, %d of them with more time than the level held "
		  "(need >= 1)", valid, clamp);
	ktap_expect(&s, valid >= 4, "only %d moves could be compared", valid);
	ktap_expect(&s, clamp >= 1, "no move in which the level held less than the task's time");
	if (trace_usable(&s, "moves")) {
		int early = 0, ran = 0;

		for (int j = 0; j < nm; j++) {
			int64_t until = j + 1 < nm ? tmove[j + 1] : INT64_MAX;
			int in = 0;

			for (long i = 0; i < nev && evs[i].t < until; i++) {
				struct ev *e = &evs[i];

				if (e->t < tmove[j] || e->cpu != dst)
					continue;
				if (e->type == EV_SWITCH && e->pid == M)
					in = 1;
				if (e->type == EV_SLOT && e->pid == M)
					break;
				if (e->type == EV_CLOSE && e->level == lvl[j]) {
					early++;
					ktap_diag("  move %d: level %lld closed on CPU %d (level_quota %" PRId64
						  ", %d moved) before the task's next slot", j + 1,
						  lvl[j], dst, e->lq, e->nr_moved);
					break;
				}
			}
			ran += in;
		}
		ktap_diag("moves after which the task ran on CPU %d: %d of %d; its level closed there "
			  "before its next slot: %d (expected 0)", dst, ran, nm, early);
		ktap_expect(&s, early == 0, "%d moves: the moved task's level closed on CPU %d before "
			    "its next slot", early, dst);
		ktap_expect(&s, ran >= 4, "the moved task ran on CPU %d after only %d moves", dst, ran);
	}
	munmap(hs, 2 * sizeof(*hs));
	munmap(fsh, sizeof(*fsh));
	ktap_sub_end(&s, "rule12_migration_funding");
}

int main(int argc, char **argv)
{
	int smp = argc > 1 && !strcmp(argv[1], "--smp");
	long hz = smp ? 0 : config_hz();
	const char *only = argc > 2 && !strcmp(argv[1], "--only") ? argv[2] : NULL;
	int r;

	if (only)
		ktap_plan("rsdl_edges --only", (int)strlen(only));
	else
		ktap_plan(smp ? "rsdl_edges --smp" : "rsdl_edges", smp ? 1 : (hz > 0 ? 7 : 6));
	ktap_watchdog(240);
	if (!sched_is_rsdl())
		ktap_bail("RSDL is not the running scheduler");
	if (smp && ncpus_online() < 2)
		ktap_bail("--smp needs 2 CPUs, %d online", ncpus_online());
	cpu = smp ? 0 : test_cpu();
	if (become_controller(50) || pin_self(cpu))
		ktap_bail("cannot become the SCHED_FIFO controller on CPU %d: %s", cpu, strerror(errno));
	rr_interval_set_or_bail(RR_MS);
	r = tr_setup();
	if (r)
		ktap_bail("cannot set up the trace instance %s: %s", TR_DIR, strerror(-r));
	ktap_diag("CPU %d, rr_interval %d ms, rsdl trace events: %s", cpu, RR_MS,
		  have_events ? "yes" : "no (every trace check fails)");
	if (smp) {
		item6(1, 0);
		ktap_finish();
	}
	if (only) {
		for (const char *c = only; *c; c++) {
			if (*c == '1') item1();
			if (*c == '2') item2();
			if (*c == '3') item3();
			if (*c == '4') item4();
			if (*c == '5') item5();
			if (*c == '7') item7(hz ? hz : 1000);
			if (*c == '9') item9();
		}
		ktap_finish();
	}
	item1();
	item2();
	item3();
	item4();
	item5();
	if (hz > 0)
		item7(hz);
	else
		ktap_diag("no CONFIG_HZ in /proc/config.gz: rule13_rr_floor not run (not counted)");
	item9();
	ktap_finish();
}
