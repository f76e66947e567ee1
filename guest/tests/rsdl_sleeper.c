// SPDX-License-Identifier: GPL-2.0
/*
 * rsdl_sleeper - "Sleepers keep their place" (sched-rsdl.rst, Guarantees;
 * rule 1).
 *
 * Expected: a task that sleeps and wakes within one rotation keeps its level
 * and its time (rules 1, 2, 4); one that wakes in a later rotation starts
 * afresh with a full quota at its first entitled slot (rules 1, 3, 4). A
 * failure means a sleeper lost or gained time or level across a sleep, or
 * kept old time into a new rotation.
 *
 * A nice 0 hog H and a nice 0 sleeper S share one CPU, so the CPU's rotation
 * keeps turning while S sleeps (an idle CPU would end its rotation). S blocks
 * on a pipe; each time it is woken it burns a little CPU, acks and blocks
 * again. The controller reads S's /proc/<pid>/sched only while S is asleep
 * (dequeued, not merely in state S: see wait_blocked()): V1 before a wake, V2
 * after it. dexec = V2.se.sum_exec_runtime -
 * V1.se.sum_exec_runtime is exactly what S ran in between, from the same
 * update_curr() deltas that charge rsdl.time_slice.
 *
 *  1. same_rotation_keeps_place: short wakes (300 us of CPU each) until 20
 *     of them fell in one rotation with at least one of each kind below (at
 *     most 200 wakes). For each wake with V1.rotation == V2.rotation and an
 *     unchanged cpu_rotation:
 *       - time left (V1.time_slice - dexec > 0): V2.time_slice ==
 *         V1.time_slice - dexec, and V2.level == V1.level, or V2.level is
 *         lower and debugfs (read right after V2, same rotation) shows every
 *         level from V1.level to V2.level - 1 closed on S's CPU: S's level
 *         closed (it shares levels with H, and an emulator charge can overrun
 *         a level) and S moved down keeping its time (rules 1, 4);
 *       - slot used up: S took k >= 1 new slots (one more each time its
 *         time ran out; the emulator can charge a 300 us burn as several ms
 *         at once), each adding one quota, the overrun being carried (rule
 *         2): V2.time_slice == k x quota + (V1.time_slice - dexec) with
 *         0 < V2.time_slice <= quota; V2.level is a usable level of the nice 0
 *         row at or after the k-th usable level following V1.level (or, on
 *         the expired array, the row's first one). If S's way to V1.level is
 *         not known to be a slot it took (the first wake, or after a
 *         rotation change), V1.level itself counts among the k: a task moved
 *         down there by a minor rotation (rule 4) keeps its bitmap, in which
 *         that level may still be clear, so it may take it as its next slot.
 *     H's rotation is E(0) = 20 x quota = 120 ms at rr_interval 6 and a slot
 *     is ~20 wakes' worth, so most wakes stay in one rotation and both kinds
 *     occur; under 2-vCPU emulation a wake can take tens of ms of wall time
 *     while H runs on, hence "until 20" rather than a fixed number of wakes.
 *  2. new_rotation_starts_fresh: 5 rounds: S uses 2 ms (more if needed, so
 *     that V1.time_slice mod quota is >= 200 us away from 0: a task that kept
 *     its old time is then told apart from a fresh one), sleeps until its
 *     CPU's rotation has advanced (cpu_rotation C > V1.rotation), then wakes
 *     for 300 us. After the rotation advanced, S starts fresh with quota at
 *     its first entitled slot >= the stair; it may run past that slot (the
 *     emulator can charge a 300 us burn as several ms at once) and take
 *     further slots, each adding one quota (rule 3, overrun carried), and a
 *     minor rotation may move it down keeping its time (rule 4). So:
 *       - C <= V2.rotation <= V2.cpu_rotation (the CPU's new rotation);
 *       - V2.time_slice == k x quota - dexec for an integer k >= 1, with
 *         0 < V2.time_slice <= quota (k = 1 when dexec < quota); a task that
 *         kept its old time would show V1.time_slice - dexec (+ k' x quota),
 *         which is >= 200 us away from that;
 *       - V2.level >= the k-th usable level of the nice 0 row from the stair
 *         (prio_level from debugfs just before the wake, if still the same
 *         rotation; 0 otherwise): each slot is a later usable level and a
 *         move only goes down, so this also holds for a task moved down to a
 *         level outside its row.
 *     A round is inconclusive (retried, at most 10 rounds) when the pre-use
 *     cannot bring V1.time_slice away from a multiple of quota, or when S
 *     took more slots than its row has left; 5 conclusive rounds are needed.
 * Tolerance on the time_slice equalities: 50 us (0.8 % of a 6 ms quota); the
 * wrong answers they catch are off by >= 300 us (no charge, a refill) or by
 * >= 200 us (the kept time).
 */
#include "util.h"

#define TOL_NS (50 * NSEC_PER_USEC)
#define RR_MS 6

static int tok[2], ack[2];
static pid_t S, H;
static struct hog_slot *hslot;

/* H's state, last CPU (/proc/<pid>/stat field 39), progress and RSDL fields, for when the
 * CPU's rotation does not behave as with H running beside S */
static void hog_diag(const char *why)
{
	char path[64], buf[1024], *p;
	struct rsdl_fields f;
	uint64_t i0 = hslot->iters;
	int cpu = -1, field = 3;

	sleep_ms(20);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)H);
	if (read_file(path, buf, sizeof(buf)) >= 0 && (p = strrchr(buf, ')'))) {
		for (p += 2; *p && field < 39; p++)
			if (*p == ' ')
				field++;
		cpu = atoi(p);
	}
	ktap_diag("%s: H (pid %d) state %c, last CPU %d, %llu loop passes in 20 ms", why, (int)H,
		  proc_state(H), cpu, (unsigned long long)(hslot->iters - i0));
	if (!rsdl_fields_read(H, &f, NULL))
		ktap_diag("H: level %lld, time_slice %lld, rotation %lld (CPU %lld), array %lld, "
			  "ran %lld ns", f.level, f.time_slice, f.rotation, f.cpu_rotation, f.array,
			  f.sum_exec);
}

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
	return wait_blocked(S, 5 * NSEC_PER_SEC);
}

static int read_fields(struct rsdl_fields *f)
{
	const char *missing = NULL;
	int r = rsdl_fields_read(S, f, &missing);

	if (r && missing)
		ktap_diag("field %s missing from /proc/%d/sched", missing, (int)S);
	return r;
}

/* the @k-th (k >= 1) usable level of @row at or after level @from, or -1 */
static int nth_slot(uint64_t row, int from, long long k)
{
	for (int l = from < 0 ? 0 : from; l < RSDL_LEVELS; l++)
		if (rsdl_level_usable(row, l) && --k == 0)
			return l;
	return -1;
}

/* @v mod @m in [0, m) */
static long long pos_mod(long long v, long long m)
{
	long long r = v % m;

	return r < 0 ? r + m : r;
}

/*
 * The closed levels (bit L = level L) of @cpu's active array and @cpu's rotation, from
 * debugfs. 0, or -1 if unreadable or the CPU's record is missing.
 */
static int active_closed(int cpu, uint64_t *closed, long long *rotation)
{
	static char buf[1 << 16];
	char *line, *save;
	int found = 0;

	*closed = 0;
	if (read_file(RSDL_DEBUGFS_PATH, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long long c, lvl, cl;
		char arr[16];

		if (kv_get(line, "cpu", &c, NULL, 0) || c != cpu)
			continue;
		if (kv_get(line, "level", &lvl, NULL, 0)) {
			found = !kv_get(line, "rotation", rotation, NULL, 0);
			continue;
		}
		if (!kv_get(line, "array", NULL, arr, sizeof(arr)) && !strcmp(arr, "active") &&
		    !kv_get(line, "closed", &cl, NULL, 0) && cl == 1 && lvl >= 0 &&
		    lvl < RSDL_LEVELS)
			*closed |= 1ULL << lvl;
	}
	return found ? 0 : -1;
}

static void test_same_rotation(int cpu, int64_t quota, uint64_t row)
{
	struct ktap_sub s = { 0 };
	int same = 0, kept = 0, stepped = 0, moved = 0, unverified = 0;
	int took_slot = 0;	/* S's current level is known to be a slot it took */

	int64_t t0 = now_ns();
	int i;

	for (i = 0; i < 200 && (same < 20 || !kept || !stepped); i++) {
		struct rsdl_fields a, b;
		long long dexec, left;

		if (read_fields(&a) || wake_sleeper(300 * NSEC_PER_USEC) || read_fields(&b)) {
			ktap_expect(&s, 0, "wake %d: cannot read the fields or wake S", i);
			break;
		}
		if (a.rotation != b.rotation || a.cpu_rotation != b.cpu_rotation) {
			took_slot = 0;
			continue;
		}
		same++;
		dexec = b.sum_exec - a.sum_exec;
		left = a.time_slice - dexec;
		if (left > 0) {
			kept++;
			if (b.level != a.level) {
				uint64_t closed = 0, need = 0;
				long long rot = -1;
				int ok = !active_closed(cpu, &closed, &rot);

				for (long long l = a.level; l < b.level && l < RSDL_LEVELS; l++)
					need |= 1ULL << l;
				ktap_diag("wake %2d: level %lld -> %lld with %lld ns left; closed "
					  "levels on CPU %d: 0x%010llx (rotation %lld)", i, a.level,
					  b.level, left, cpu, (unsigned long long)closed, rot);
				if (ok && rot != b.cpu_rotation) {
					/* the rotation ended meanwhile: nothing to compare */
					unverified++;
				} else {
					moved++;
					ktap_expect(&s, ok && b.level > a.level &&
							    (closed & need) == need,
						    "wake %d: level %lld -> %lld with %lld ns still "
						    "left, levels %lld..%lld not all closed", i,
						    a.level, b.level, left, a.level, b.level - 1);
				}
				took_slot = 0;
			}
			ktap_expect(&s, llabs(b.time_slice - left) <= TOL_NS,
				    "wake %d: time_slice %lld - ran %lld = %lld, kernel says %lld", i,
				    a.time_slice, dexec, left, b.time_slice);
		} else {
			/* slots taken: time_slice = k x quota + left */
			long long k = (-left) / quota + 1, minlvl;

			stepped++;
			minlvl = nth_slot(row, took_slot ? a.level + 1 : a.level, k);
			/* next slot(s) later in this rotation, or (no slot left) the first
			 * slot of the row on the expired array */
			ktap_expect(&s, b.array == 1 ? b.level == rsdl_first_slot(row, 0)
						     : minlvl >= 0 && b.level >= minlvl &&
							       rsdl_level_usable(row, b.level),
				    "wake %d: slot used up at level %lld (%s), %lld new slot(s): "
				    "level %lld, want a usable level >= %lld (array %lld)", i,
				    a.level, took_slot ? "a slot it took" : "way there unknown", k,
				    b.level, minlvl, b.array);
			ktap_expect(&s, b.time_slice > 0 && b.time_slice <= quota &&
					    llabs(b.time_slice - (k * quota + left)) <= TOL_NS,
				    "wake %d: new slot time_slice %lld, want %lld x quota %lld + "
				    "overrun %lld", i, b.time_slice, k, (long long)quota, left);
			took_slot = b.array == 0;
		}
		if (i < 3 || left <= 0)
			ktap_diag("wake %2d: level %lld -> %lld, time_slice %lld -> %lld, ran %lld ns, "
				  "rotation %lld, array %lld", i, a.level, b.level, a.time_slice,
				  b.time_slice, dexec, b.rotation, b.array);
	}
	ktap_diag("%d wakes in %.0f ms: %d in one rotation (%d kept their time, %d of them moved "
		  "down a closed level, %d unverified; %d took a new slot)", i,
		  MS(now_ns() - t0), same, kept, moved, unverified, stepped);
	if (same < 20)
		hog_diag("few wakes in one rotation");
	ktap_expect(&s, same >= 20, "only %d of %d wakes stayed in one rotation", same, i);
	ktap_expect(&s, kept > 0 && stepped > 0, "kept %d, stepped %d: both must occur", kept,
		    stepped);
	ktap_sub_end(&s, "same_rotation_keeps_place");
}

#define KEPT_GAP (4 * TOL_NS)

static void test_new_rotation(int cpu, int64_t quota, uint64_t row)
{
	struct ktap_sub s = { 0 };
	int good = 0, round = 0, inconclusive = 0;

	while (good < 5 && round < 10) {
		struct rsdl_fields a, b, c;
		struct rsdl_cpu_stat st;
		long long dexec, k, want, kept, gap = 0, from = 0, minlvl;
		int i = round++, tries, have_st;
		int64_t t0;

		/* use 2 ms of the slot (taking a fresh one first if less than 3 ms is left),
		 * until the time left is clearly apart from a multiple of quota */
		for (tries = 0; tries < 5; tries++) {
			if (read_fields(&a))
				break;
			if (a.time_slice < 3 * NSEC_PER_MSEC)
				wake_sleeper(a.time_slice + 100 * NSEC_PER_USEC);
			wake_sleeper(2 * NSEC_PER_MSEC);
			if (read_fields(&a))
				break;
			gap = pos_mod(a.time_slice, quota);
			if (gap > KEPT_GAP && gap < quota - KEPT_GAP)
				break;
		}
		if (tries == 5) {
			ktap_diag("round %d: inconclusive: time_slice %lld is within %lld ns of a "
				  "multiple of quota after 5 tries", i, a.time_slice,
				  (long long)KEPT_GAP);
			inconclusive++;
			continue;
		}
		if (read_fields(&a)) {
			ktap_expect(&s, 0, "round %d: cannot read the fields", i);
			break;
		}
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
		have_st = !rsdl_debugfs_cpu(cpu, &st);
		if (wake_sleeper(300 * NSEC_PER_USEC) || read_fields(&b)) {
			ktap_expect(&s, 0, "round %d: wake failed", i);
			continue;
		}
		dexec = b.sum_exec - a.sum_exec;
		/* the number of slots S took in the new rotation: time_slice = k x quota - ran */
		k = (b.time_slice + dexec + quota / 2 - pos_mod(b.time_slice + dexec + quota / 2,
							      quota)) / quota;
		want = k * quota - dexec;
		kept = a.time_slice - dexec;
		if (kept <= 0)
			kept += ((-kept) / quota + 1) * quota;
		if (have_st && st.rotation == b.rotation)
			from = st.prio_level;
		minlvl = nth_slot(row, from, k < 1 ? 1 : k);
		ktap_diag("round %d: before: level %lld time_slice %lld rotation %lld; CPU rotation "
			  "%lld, stair %lld%s; ran %lld; after: level %lld (want >= %lld) time_slice "
			  "%lld (want %lld x quota - ran = %lld; kept would be %lld) rotation %lld "
			  "(CPU %lld) array %lld", i, a.level, a.time_slice, a.rotation, c.cpu_rotation,
			  have_st ? st.prio_level : -1LL,
			  have_st && st.rotation != b.rotation ? " (older rotation)" : "", dexec,
			  b.level, minlvl, b.time_slice, k, want, kept, b.rotation, b.cpu_rotation,
			  b.array);
		if (minlvl < 0) {
			ktap_diag("round %d: inconclusive: %lld slots from level %lld exceed the nice "
				  "0 row", i, k, from);
			inconclusive++;
			continue;
		}
		good++;
		ktap_expect(&s, b.rotation >= c.cpu_rotation && b.rotation <= b.cpu_rotation,
			    "round %d: rotation %lld -> %lld, CPU rotation %lld -> %lld (not fresh)",
			    i, a.rotation, b.rotation, c.cpu_rotation, b.cpu_rotation);
		ktap_expect(&s, b.time_slice > 0 && b.time_slice <= quota,
			    "round %d: time_slice %lld not in (0, quota %lld]", i, b.time_slice,
			    (long long)quota);
		ktap_expect(&s, k >= 1 && llabs(b.time_slice - want) <= TOL_NS,
			    "round %d: time_slice %lld, want %lld x quota - ran %lld = %lld (kept "
			    "would be %lld)", i, b.time_slice, k, dexec, want, kept);
		ktap_expect(&s, dexec >= quota - TOL_NS || k == 1,
			    "round %d: ran %lld < quota but k = %lld", i, dexec, k);
		/* rsdl.array of a sleeping task is only meaningful in its CPU's current rotation
		 * (it names the array it was queued on, which a major rotation swaps) */
		ktap_expect(&s, (b.array == 0 || b.rotation != b.cpu_rotation) &&
				    b.level >= minlvl && b.level < RSDL_LEVELS,
			    "round %d: level %lld (array %lld) below the %lld-th usable level %lld "
			    "of the nice 0 row from the stair %lld", i, b.level, b.array, k, minlvl,
			    from);
	}
	ktap_diag("%d conclusive rounds of %d (%d inconclusive), want 5", good, round,
		  inconclusive);
	ktap_expect(&s, good >= 5, "only %d conclusive rounds of %d", good, round);
	ktap_sub_end(&s, "new_rotation_starts_fresh");
}

int main(void)
{
	int cpu = test_cpu();
	struct hog_slot *h = shared_alloc(sizeof(*h));
	struct task_cfg hc = { .cpu = cpu, .policy = SCHED_OTHER, .nice = 0 };
	int64_t quota = rsdl_quota_ns(0, RR_MS);
	uint64_t row = rsdl_row(0);
	struct rsdl_fields f;
	const char *missing = NULL;

	ktap_plan("rsdl_sleeper", 2);
	ktap_watchdog(90);
	ktap_diag("scheduler: %s, %d CPUs online, test CPU %d", sched_name(), ncpus_online(), cpu);
	become_controller_or_bail();
	rr_interval_set_or_bail(RR_MS);
	if (pipe(tok) || pipe(ack))
		ktap_bail("pipe: %s", strerror(errno));
	hslot = h;
	H = spawn_hog(&hc, h, HOG_COUNT, 60 * NSEC_PER_SEC);
	S = fork_child();
	if (S == 0)
		sleeper_body(cpu);
	if (hogs_wait_ready(h, 1, 5 * NSEC_PER_SEC))
		ktap_bail("hog did not start");
	if (wait_blocked(S, 5 * NSEC_PER_SEC)) {
		if (!rsdl_fields_read(S, &f, NULL))
			ktap_diag("S: state %c, level %lld, time_slice %lld, rotation %lld (CPU %lld), "
				  "array %lld, ran %lld ns", proc_state(S), f.level, f.time_slice,
				  f.rotation, f.cpu_rotation, f.array, f.sum_exec);
		ktap_bail("sleeper did not block on its pipe within 5 s");
	}
	if (rsdl_fields_read(S, &f, &missing))
		ktap_bail("/proc/%d/sched lacks %s", (int)S, missing ? missing : "rsdl fields");
	ktap_diag("S: quota %lld (want %lld), usable_slots %lld (want %d)", f.quota,
		  (long long)quota, f.usable_slots, rsdl_usable_slots(0));
	sleep_ms(20);
	test_same_rotation(cpu, quota, row);
	test_new_rotation(cpu, quota, row);
	ktap_finish();
}
