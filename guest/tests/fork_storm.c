// SPDX-License-Identifier: GPL-2.0
/*
 * fork_storm - thousands of task creations and exits, as processes and as
 * threads, finish in bounded time and leave nothing behind.
 *
 * Expected: no scheduler rule sets a figure here; rule 8 (fork) and the exit
 * path must simply never lose a task. A failure (usually a watchdog timeout)
 * means a wakeup, a fork or an exit was lost, or a child was left behind.
 *
 *  1. fork_exit_sequential: 1000 x (fork, child _exit(i & 0x7f), waitpid),
 *     every exit status comes back intact.
 *  2. fork_exit_concurrent: 1000 children, 64 alive at once, each yielding a
 *     few times before exiting (wakeup/exit paths with a full runqueue).
 *  3. pthread_create_join: 1000 threads, 16 at once, each returns its
 *     argument to pthread_join.
 *  4. nested_fork_tree: a fork bomb limited by count: fanout 3, depth 5 =
 *     3+9+27+81+243 = 363 descendants, each waiting for its own children;
 *     a shared counter caps the tree at 400 so a bug cannot run away.
 *  5. no_zombies: this process is a child subreaper, so every orphan would
 *     come back to it; afterwards waitpid(-1) must say ECHILD and /proc must
 *     hold no zombie whose parent is this process.
 * Each phase must finish within 120 s of guest time.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "util.h"

/*
 * 1000 per phase: the lab's debug kernel (lockdep) under icount spends about
 * 33 ms of guest time per fork+exit+wait, so this is ~35 s a phase; the limit
 * of 120 s a phase leaves room for a slower scheduler but not for a hang.
 */
#define N_TASKS 1000
#define PHASE_LIMIT_NS (120 * NSEC_PER_SEC)

static pid_t raw_fork(void)
{
	pid_t parent = getpid(), p;

	fflush(stdout);
	p = fork();
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
	}
	return p;
}

static void phase_done(const char *name, int64_t t0, int n, int bad)
{
	int64_t dt = now_ns() - t0;

	ktap_diag("%s: %d tasks in %.2f s (%.0f us each, limit %.0f s), %d bad", name, n,
		  dt / 1e9, dt / 1e3 / (n ? n : 1), PHASE_LIMIT_NS / 1e9, bad);
	ktap_check(!bad && dt <= PHASE_LIMIT_NS, name, "%d bad results, %.2f s (limit %.0f s)",
		   bad, dt / 1e9, PHASE_LIMIT_NS / 1e9);
}

static void test_sequential(void)
{
	int64_t t0 = now_ns();
	int bad = 0, done = 0;

	for (int i = 0; i < N_TASKS; i++) {
		pid_t p = raw_fork();
		int st;

		if (p < 0) {
			ktap_diag("fork %d: %s", i, strerror(errno));
			bad++;
			break;
		}
		if (p == 0)
			_exit(i & 0x7f);
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != (i & 0x7f))
			bad++;
		done++;
	}
	phase_done("fork_exit_sequential", t0, done, bad + (done != N_TASKS));
}

static void test_concurrent(void)
{
	int64_t t0 = now_ns();
	int bad = 0, started = 0, reaped = 0, alive = 0;

	while (reaped < N_TASKS) {
		while (alive < 64 && started < N_TASKS) {
			pid_t p = raw_fork();

			if (p < 0) {
				ktap_diag("fork: %s", strerror(errno));
				bad++;
				started = N_TASKS;
				break;
			}
			if (p == 0) {
				for (int k = 0; k < 3; k++)
					sched_yield();
				_exit(7);
			}
			started++;
			alive++;
		}
		if (!alive)
			break;
		{
			int st;
			pid_t p = waitpid(-1, &st, 0);

			if (p < 0) {
				bad++;
				break;
			}
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 7)
				bad++;
			alive--;
			reaped++;
		}
	}
	phase_done("fork_exit_concurrent", t0, reaped, bad + (reaped != N_TASKS));
}

static atomic_int thread_runs;

static void *thread_fn(void *arg)
{
	atomic_fetch_add(&thread_runs, 1);
	sched_yield();
	return arg;
}

static void test_threads(void)
{
	int64_t t0 = now_ns();
	int bad = 0, joined = 0;

	for (int i = 0; i < N_TASKS; i += 16) {
		pthread_t th[16];
		int n = 0;

		for (int k = 0; k < 16 && i + k < N_TASKS; k++) {
			if (pthread_create(&th[n], NULL, thread_fn, (void *)(intptr_t)(i + k))) {
				bad++;
				continue;
			}
			n++;
		}
		for (int k = 0; k < n; k++) {
			void *ret;

			if (pthread_join(th[k], &ret) || (intptr_t)ret < i || (intptr_t)ret >= i + 16)
				bad++;
			joined++;
		}
	}
	if (atomic_load(&thread_runs) != N_TASKS) {
		ktap_diag("threads ran %d times, want %d", atomic_load(&thread_runs), N_TASKS);
		bad++;
	}
	phase_done("pthread_create_join", t0, joined, bad + (joined != N_TASKS));
}

#define TREE_FAN 3
#define TREE_DEPTH 5
#define TREE_CAP 400

static _Atomic int *tree_count;

/* Returns 0 if this subtree was complete and healthy. */
static int tree_node(int depth)
{
	pid_t kids[TREE_FAN];
	int n = 0, bad = 0;

	if (depth == TREE_DEPTH)
		return 0;
	for (int i = 0; i < TREE_FAN; i++) {
		pid_t p;

		if (atomic_fetch_add(tree_count, 1) >= TREE_CAP)
			return 1;
		p = raw_fork();
		if (p < 0)
			return 1;
		if (p == 0)
			_exit(tree_node(depth + 1));
		kids[n++] = p;
	}
	for (int i = 0; i < n; i++) {
		int st;

		if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	return bad;
}

static void test_tree(void)
{
	int64_t t0 = now_ns();
	int expect = 0, p = 1, bad;

	tree_count = shared_alloc(sizeof(*tree_count));
	for (int d = 1; d <= TREE_DEPTH; d++)
		expect += (p *= TREE_FAN);
	bad = tree_node(0);
	ktap_diag("nested_fork_tree: %d processes created, want %d", atomic_load(tree_count),
		  expect);
	phase_done("nested_fork_tree", t0, atomic_load(tree_count),
		   bad + (atomic_load(tree_count) != expect));
}

static void test_no_zombies(void)
{
	struct ktap_sub s = { 0 };
	pid_t me = getpid();
	DIR *d;
	struct dirent *e;
	int zombies_ours = 0, zombies_other = 0;
	pid_t w = waitpid(-1, NULL, WNOHANG);

	ktap_expect(&s, w < 0 && errno == ECHILD, "waitpid(-1) after the storm: %d (errno %d), "
		    "want ECHILD", (int)w, errno);
	d = opendir("/proc");
	if (!d)
		ktap_bail("opendir /proc: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		int ppid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (read_file(path, buf, sizeof(buf)) < 0)
			continue;
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 2, "%*c %d", &ppid) != 1)
			continue;
		if (p[2] == 'Z') {
			if (ppid == me)
				zombies_ours++;
			else
				zombies_other++;
		}
	}
	closedir(d);
	ktap_diag("zombies: %d children of this test, %d elsewhere (not ours)", zombies_ours,
		  zombies_other);
	ktap_expect(&s, zombies_ours == 0, "%d zombie children left", zombies_ours);
	ktap_sub_end(&s, "no_zombies");
}

int main(void)
{
	ktap_plan("fork_storm", 5);
	ktap_watchdog(280);
	ktap_diag("scheduler: %s, %d CPUs online", sched_name(), ncpus_online());
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		ktap_diag("PR_SET_CHILD_SUBREAPER failed: %s", strerror(errno));
	test_sequential();
	test_concurrent();
	test_threads();
	test_tree();
	test_no_zombies();
	ktap_finish();
}
