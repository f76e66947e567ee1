// SPDX-License-Identifier: GPL-2.0
/*
 * hotplug_basic - CPU 1 goes offline and online 20 times under load, and
 * every task gets through it (needs 2 CPUs; suite.list marks it smp2).
 *
 * Expected: sched-rsdl.rst, SMP (CPU hotplug moves tasks through the core as
 * for any class; a moved task keeps its entitlement, rule 12) and the core's
 * select_fallback_rq(). A failure means a transition failed, or a task was
 * lost or stuck on the dead CPU.
 *
 * Load: two unpinned workers and one worker pinned to CPU 1, each doing a
 * fixed amount of work (~1.5 s of CPU, calibrated first), a pipe ping-pong
 * pair (3000 round trips) and a 1 ms sleeper (1500 sleeps).
 *
 *  1. hotplug_cycles: 20 x (cpu1/online := 0, := 1) all succeed and the file
 *     reads back each state; the slowest transition is printed.
 *  2. tasks_complete: every worker, both ping-pong ends and the sleeper exit
 *     with status 0 within 60 s after the cycles.
 *  3. pinned_task_handled: kernel rule (select_fallback_rq): a task whose
 *     only allowed CPU goes offline is given the cpuset's CPUs and keeps
 *     running. So the CPU 1 worker must progress while CPU 1 is offline, its
 *     Cpus_allowed_list must then include CPU 0, and it must finish.
 *  4. cpu1_back_online: CPU 1 is online at the end and a new task pinned to
 *     it runs there (sched_getcpu() == 1).
 */
#include "util.h"

#define ONLINE "/sys/devices/system/cpu/cpu1/online"
#define CYCLES 20

struct work {
	volatile uint64_t iters;
	volatile int done;
};

static void cpu1_online(void) { write_file(ONLINE, "1"); }

static int set_cpu1(int on)
{
	for (int tries = 0; tries < 50; tries++) {
		ssize_t r = write_file(ONLINE, on ? "1" : "0");

		if (r >= 0)
			return cpu_is_online(1) == on ? 0 : -EIO;
		if (r != -EBUSY && r != -EAGAIN)
			return (int)r;
		sleep_ms(10);
	}
	return -EBUSY;
}

static void worker(struct work *w, uint64_t passes)
{
	for (uint64_t n = 1; n <= passes; n++) {
		for (int i = 0; i < HOG_INNER; i++)
			__asm__ __volatile__("" ::: "memory");
		w->iters = n;
	}
	w->done = 1;
	_exit(0);
}

int main(void)
{
	struct work *w = shared_alloc(sizeof(*w) * 8);
	struct ktap_sub s = { 0 };
	pid_t pid[8];
	int np = 0, ab[2], ba[2], pinned_idx;
	uint64_t passes, progress_off = 0;
	int64_t worst = 0, t0;
	char allowed[128] = "?";

	ktap_plan("hotplug_basic", 4);
	ktap_watchdog(180);
	ktap_diag("scheduler: %s, %d CPUs online", sched_name(), ncpus_online());
	if (ncpus_online() < 2 || !file_exists(ONLINE))
		ktap_bail("needs CPU 1 online and %s", ONLINE);
	ktap_on_exit(cpu1_online);
	if (become_controller(50))
		ktap_bail("cannot become SCHED_FIFO controller: %s", strerror(errno));
	pin_self(0);

	/* Calibrate: passes per second of one worker alone on CPU 1. */
	{
		struct hog_slot *h = shared_alloc(sizeof(*h));
		struct task_cfg c = { .cpu = 1, .policy = SCHED_OTHER };
		pid_t p = spawn_hog(&c, h, HOG_COUNT, 10 * NSEC_PER_SEC);
		uint64_t i0;

		hogs_wait_ready(h, 1, 5 * NSEC_PER_SEC);
		sleep_ms(50);
		i0 = h->iters;
		t0 = now_ns();
		sleep_ms(200);
		passes = (uint64_t)((h->iters - i0) * 1.5e9 / (now_ns() - t0));
		kill_child(p);
		ktap_diag("calibrated: %llu passes = 1.5 s of CPU", (unsigned long long)passes);
	}

	for (int i = 0; i < 3; i++) {
		pid[np] = fork_child();
		if (pid[np] == 0) {
			if (i == 2 && pin_self(1))
				_exit(3);
			worker(&w[np], passes);
		}
		np++;
	}
	pinned_idx = 2;
	if (pipe(ab) || pipe(ba))
		ktap_bail("pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		pid[np] = fork_child();
		if (pid[np] == 0) {
			char c = 0;

			for (int k = 0; k < 3000; k++) {
				if (i == 0 ? (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
					   : (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1))
					_exit(1);
				w[3 + i].iters = k + 1;
			}
			w[3 + i].done = 1;
			_exit(0);
		}
		np++;
	}
	pid[np] = fork_child();
	if (pid[np] == 0) {
		for (int k = 0; k < 1500; k++) {
			sleep_ns(NSEC_PER_MSEC);
			w[5].iters = k + 1;
		}
		w[5].done = 1;
		_exit(0);
	}
	np++;

	sleep_ms(50);
	for (int i = 0; i < CYCLES; i++) {
		int64_t a = now_ns(), b, c;
		int r0, r1;
		uint64_t before;

		r0 = set_cpu1(0);
		b = now_ns();
		before = w[pinned_idx].iters;
		sleep_ms(30);
		if (!r0 && !w[pinned_idx].done)
			progress_off += w[pinned_idx].iters - before;
		if (i == 0 && !r0) {
			char path[64], st[4096], *p;

			snprintf(path, sizeof(path), "/proc/%d/status", (int)pid[pinned_idx]);
			if (read_file(path, st, sizeof(st)) > 0 &&
			    (p = strstr(st, "Cpus_allowed_list:"))) {
				sscanf(p + 18, " %127s", allowed);
			}
		}
		c = now_ns();
		r1 = set_cpu1(1);
		if (b - a > worst)
			worst = b - a;
		if (now_ns() - c > worst)
			worst = now_ns() - c;
		ktap_expect(&s, r0 == 0 && r1 == 0, "cycle %d: offline %s, online %s", i,
			    strerror(-r0), strerror(-r1));
		sleep_ms(20);
	}
	ktap_diag("%d offline/online cycles, slowest transition %.1f ms", CYCLES, MS(worst));
	ktap_sub_end(&s, "hotplug_cycles");

	memset(&s, 0, sizeof(s));
	t0 = now_ns();
	for (int i = 0; i < np; i++) {
		int st = -1;

		while (now_ns() - t0 < 60 * NSEC_PER_SEC) {
			pid_t r = waitpid(pid[i], &st, WNOHANG);

			if (r == pid[i]) {
				ktap_untrack_child(pid[i]);
				break;
			}
			sleep_ms(20);
		}
		ktap_expect(&s, WIFEXITED(st) && WEXITSTATUS(st) == 0 && w[i].done,
			    "task %d (%s) did not complete (status %d, progress %llu)", i,
			    i < 3 ? "worker" : i < 5 ? "ping-pong" : "sleeper", st,
			    (unsigned long long)w[i].iters);
	}
	ktap_diag("all tasks done %.2f s after the last cycle", (now_ns() - t0) / 1e9);
	ktap_sub_end(&s, "tasks_complete");

	memset(&s, 0, sizeof(s));
	ktap_diag("CPU 1 worker: %llu passes while CPU 1 was offline, Cpus_allowed_list after "
		  "the first offline: %s", (unsigned long long)progress_off, allowed);
	ktap_expect(&s, progress_off > 0, "the CPU 1 worker made no progress while CPU 1 was "
		    "offline");
	ktap_expect(&s, allowed[0] == '0', "Cpus_allowed_list '%s' does not include CPU 0",
		    allowed);
	ktap_expect(&s, w[pinned_idx].done, "the CPU 1 worker did not finish");
	ktap_sub_end(&s, "pinned_task_handled");

	memset(&s, 0, sizeof(s));
	ktap_expect(&s, cpu_is_online(1), "CPU 1 is offline at the end");
	{
		struct hog_slot *h = shared_alloc(sizeof(*h));
		struct task_cfg c = { .cpu = 1, .policy = SCHED_OTHER };
		pid_t p;

		h->want_cpu = 1;
		p = spawn_hog(&c, h, HOG_GETCPU, 5 * NSEC_PER_SEC);
		hogs_wait_ready(h, 1, 5 * NSEC_PER_SEC);
		sleep_ms(100);
		ktap_expect(&s, h->iters > 0 && h->cpu == 1 && h->wrong_cpu == 0,
			    "task pinned to CPU 1: last on CPU %d, %llu passes, %llu off CPU 1",
			    h->cpu, (unsigned long long)h->iters, (unsigned long long)h->wrong_cpu);
		kill_child(p);
	}
	ktap_sub_end(&s, "cpu1_back_online");
	ktap_finish();
}
