// SPDX-License-Identifier: GPL-2.0
/*
 * rsdl_sleeper - "Sleepers keep their place" (rsdl.md rule 1, Guarantees).
 *
 * A nice 0 hog H and a nice 0 sleeper S share one CPU, so the CPU's rotation
 * keeps turning while S sleeps (an idle CPU would end its rotation). S blocks
 * on a pipe; each time it is woken it burns a little CPU, acks and blocks
 * again. The controller reads S's /proc/<pid>/sched only while S is asleep:
 * V1 before a wake, V2 after it. dexec = V2.se.sum_exec_runtime -
 * V1.se.sum_exec_runtime is exactly what S ran in between, from the same
 * update_curr() deltas that charge rsdl.time_slice.
 *
 *  1. same_rotation_keeps_place: 40 short wakes (300 us of CPU each). For each
 *     wake with V1.rotation == V2.rotation and an unchanged cpu_rotation:
 *       - time left (V1.time_slice - dexec > 0): V2.level == V1.level and
 *         V2.time_slice == V1.time_slice - dexec;
 *       - slot used up: V2.level is a later usable level of the nice 0 row
 *         (or, on the expired array, its first one) and V2.time_slice ==
 *         quota + (V1.time_slice - dexec) (overrun is carried, rule 2).
 *     At least 20 wakes must fall in one rotation (H's rotation is
 *     E(0) = 20 x quota = 120 ms at rr_interval 6; the 40 wakes take ~60 ms
 *     of H's time), and at least one of each kind must occur (a slot is 20
 *     wakes' worth).
 *  2. new_rotation_starts_fresh: 5 times: S uses 2 ms (so its time_slice is
 *     clearly below quota), sleeps until its CPU's rotation has advanced
 *     (cpu_rotation > V1.rotation), then wakes for 300 us: V2.rotation >
 *     V1.rotation, V2.time_slice == quota - dexec (not V1.time_slice - dexec),
 *     V2.level is usable in the nice 0 row and >= the stair (prio_level from
 *     debugfs read just before the wake).
 * Tolerance on the time_slice equalities: 50 us (0.8 % of a 6 ms quota); the
 * wrong answers they catch are off by >= 300 us (no charge, a refill) or by
 * the 2 ms pre-use.
 */
#include "util.h"

#define TOL_NS (50 * NSEC_PER_USEC)
#define RR_MS 6

static int tok[2], ack[2];
static pid_t S;

static void sleeper_body(int cpu)
{
	int64_t work;

	if (pin_self(cpu))
		_exit(1);
	for (;;) {
		if (read(tok[0], &work, sizeof(work)) != sizeof(work))
			_exit(0);
		burn_cpu_ns(work);
		if (write(ack[1], "a", 1) != 1)
			_exit(1);
	}
}

static int wake_sleeper(int64_t work_ns)
{
	char c;

	if (write(tok[1], &work_ns, sizeof(work_ns)) != sizeof(work_ns))
		return -1;
	if (read(ack[0], &c, 1) != 1)
		return -1;
	return wait_blocked(S, NSEC_PER_SEC);
}

static int read_fields(struct rsdl_fields *f)
{
	const char *missing = NULL;
	int r = rsdl_fields_read(S, f, &missing);

	if (r && missing)
		ktap_diag("field %s missing from /proc/%d/sched", missing, (int)S);
	return r;
}

static void test_same_rotation(int64_t quota, uint64_t row)
{
	struct ktap_sub s = { 0 };
	int same = 0, kept = 0, stepped = 0;

	for (int i = 0; i < 40; i++) {
		struct rsdl_fields a, b;
		long long dexec, left;

		if (read_fields(&a) || wake_sleeper(300 * NSEC_PER_USEC) || read_fields(&b)) {
			ktap_expect(&s, 0, "wake %d: cannot read the fields or wake S", i);
			break;
		}
		if (a.rotation != b.rotation || a.cpu_rotation != b.cpu_rotation)
			continue;
		same++;
		dexec = b.sum_exec - a.sum_exec;
		left = a.time_slice - dexec;
		if (left > 0) {
			kept++;
			ktap_expect(&s, b.level == a.level,
				    "wake %d: level %lld -> %lld with %lld ns still left", i, a.level,
				    b.level, left);
			ktap_expect(&s, llabs(b.time_slice - left) <= TOL_NS,
				    "wake %d: time_slice %lld - ran %lld = %lld, kernel says %lld", i,
				    a.time_slice, dexec, left, b.time_slice);
		} else {
			stepped++;
			/* next slot later in this rotation, or (no slot left) the first
			 * slot of the row on the expired array */
			ktap_expect(&s, b.array == 1 ? b.level == rsdl_first_slot(row, 0)
						     : b.level > a.level && rsdl_level_usable(row, b.level),
				    "wake %d: slot used up at level %lld, next level %lld (array %lld)",
				    i, a.level, b.level, b.array);
			ktap_expect(&s, llabs(b.time_slice - (quota + left)) <= TOL_NS,
				    "wake %d: new slot time_slice %lld, want quota %lld + overrun %lld",
				    i, b.time_slice, (long long)quota, left);
		}
		if (i < 3 || left <= 0)
			ktap_diag("wake %2d: level %lld -> %lld, time_slice %lld -> %lld, ran %lld ns, "
				  "rotation %lld", i, a.level, b.level, a.time_slice, b.time_slice,
				  dexec, b.rotation);
	}
	ktap_diag("40 wakes: %d in one rotation (%d kept their slot, %d moved to the next "
		  "slot)", same, kept, stepped);
	ktap_expect(&s, same >= 20, "only %d of 40 wakes stayed in one rotation", same);
	ktap_expect(&s, kept > 0 && stepped > 0, "kept %d, stepped %d: both must occur", kept,
		    stepped);
	ktap_sub_end(&s, "same_rotation_keeps_place");
}

static void test_new_rotation(int cpu, int64_t quota, uint64_t row)
{
	struct ktap_sub s = { 0 };

	for (int i = 0; i < 5; i++) {
		struct rsdl_fields a, b, c;
		struct rsdl_cpu_stat st;
		long long dexec, stair = -1;
		int64_t t0;

		/* use 2 ms of the slot (or take a fresh one first if less than that is left) */
		if (read_fields(&a)) {
			ktap_expect(&s, 0, "cannot read the fields");
			break;
		}
		if (a.time_slice < 3 * NSEC_PER_MSEC)
			wake_sleeper(a.time_slice + 100 * NSEC_PER_USEC);
		wake_sleeper(2 * NSEC_PER_MSEC);
		if (read_fields(&a))
			break;
		t0 = now_ns();
		do {
			sleep_ms(5);
			if (read_fields(&c))
				break;
		} while (c.cpu_rotation <= a.rotation && now_ns() - t0 < 3 * NSEC_PER_SEC);
		if (c.cpu_rotation <= a.rotation) {
			ktap_expect(&s, 0, "round %d: the CPU's rotation did not advance in 3 s (%lld)",
				    i, c.cpu_rotation);
			continue;
		}
		if (!rsdl_debugfs_cpu(cpu, &st))
			stair = st.prio_level;
		if (wake_sleeper(300 * NSEC_PER_USEC) || read_fields(&b)) {
			ktap_expect(&s, 0, "round %d: wake failed", i);
			continue;
		}
		dexec = b.sum_exec - a.sum_exec;
		ktap_diag("round %d: before: level %lld time_slice %lld rotation %lld; CPU rotation "
			  "%lld, stair %lld; after: level %lld time_slice %lld (want quota - ran = "
			  "%lld) rotation %lld", i, a.level, a.time_slice, a.rotation, c.cpu_rotation,
			  stair, b.level, b.time_slice, (long long)(quota - dexec), b.rotation);
		ktap_expect(&s, b.rotation > a.rotation, "round %d: rotation %lld -> %lld (not fresh)",
			    i, a.rotation, b.rotation);
		ktap_expect(&s, llabs(b.time_slice - (quota - dexec)) <= TOL_NS,
			    "round %d: time_slice %lld, want quota - ran = %lld (kept would be %lld)",
			    i, b.time_slice, (long long)(quota - dexec), a.time_slice - dexec);
		ktap_expect(&s, rsdl_level_usable(row, b.level), "round %d: level %lld not in the "
			    "nice 0 row", i, b.level);
		ktap_expect(&s, stair < 0 || b.level >= stair, "round %d: level %lld below the stair "
			    "%lld", i, b.level, stair);
	}
	ktap_sub_end(&s, "new_rotation_starts_fresh");
}

int main(void)
{
	int cpu = test_cpu(), r;
	struct hog_slot *h = shared_alloc(sizeof(*h));
	struct task_cfg hc = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 };
	int64_t quota = rsdl_quota_ns(0, RR_MS);
	uint64_t row = rsdl_row(0);
	struct rsdl_fields f;
	const char *missing = NULL;

	ktap_plan("rsdl_sleeper", 2);
	ktap_watchdog(90);
	ktap_diag("scheduler: %s, %d CPUs online, test CPU %d", sched_name(), ncpus_online(), cpu);
	if (become_controller(50) || pin_self(ctl_cpu()))
		ktap_bail("cannot become SCHED_FIFO controller: %s", strerror(errno));
	r = rr_interval_set(RR_MS);
	if (r)
		ktap_bail("cannot set rr_interval %d: %s", RR_MS, strerror(-r));
	if (pipe(tok) || pipe(ack))
		ktap_bail("pipe: %s", strerror(errno));
	spawn_hog(&hc, h, HOG_COUNT, 60 * NSEC_PER_SEC);
	S = fork_child();
	if (S == 0)
		sleeper_body(cpu);
	if (hogs_wait_ready(h, 1, 5 * NSEC_PER_SEC) || wait_blocked(S, NSEC_PER_SEC))
		ktap_bail("hog or sleeper did not start");
	if (rsdl_fields_read(S, &f, &missing))
		ktap_bail("/proc/%d/sched lacks %s", (int)S, missing ? missing : "rsdl fields");
	ktap_diag("S: quota %lld (want %lld), usable_slots %lld (want %d)", f.quota,
		  (long long)quota, f.usable_slots, rsdl_usable_slots(0));
	sleep_ms(20);
	test_same_rotation(quota, row);
	test_new_rotation(cpu, quota, row);
	ktap_finish();
}
