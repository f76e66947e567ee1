// SPDX-License-Identifier: GPL-2.0
/*
 * setattr_einval - the scheduling syscalls reject invalid input with the
 * error the 6.12 kernel documents in kernel/sched/syscalls.c and
 * kernel/sys.c, a rejected call changes nothing, and valid calls round-trip
 * through sched_getattr().
 *
 * Expected: the core's syscall layer, shared by both schedulers, so the same
 * answers on RSDL and EEVDF (sched-rsdl.rst rule 10 only adds that a call
 * changing neither row nor quota changes no RSDL state). A failure means the
 * series changed what a syscall accepts or returns, or a refused call changed
 * the task.
 *
 * The target is a sleeping child; before every invalid call it is put in a
 * known state (SCHED_NORMAL, nice 7) that is read back afterwards.
 *
 * What the kernel really does (the 6.12.118 source), where it differs from
 * what one might guess:
 *  - sched_setattr() clamps sched_nice to [-20, 19] (sched_copy_attr: "XXX:
 *    Do we want to be lenient like existing syscalls"), and setpriority()
 *    clamps too, so nice 20 / -21 are accepted as 19 / -20, not EINVAL.
 *  - a sched_attr size below 48 (VER0) or above PAGE_SIZE, or a larger
 *    struct with non-zero bytes past the kernel's, gives E2BIG and the kernel
 *    writes its own size back into attr->size.
 *  - an unprivileged nice decrease is EACCES from setpriority() but EPERM
 *    from sched_setattr().
 *  - SCHED_IDLE ignores sched_nice: the task keeps its previous nice.
 */
#include <sys/resource.h>
#include <grp.h>
#include "util.h"

static pid_t target;

static int attr_call(pid_t pid, struct lab_sched_attr *a, unsigned int flags)
{
	return lab_sched_setattr(pid, a, flags);
}

static int setsched(pid_t pid, int policy, int prio)
{
	struct sched_param p = { .sched_priority = prio };

	return syscall(SYS_sched_setscheduler, pid, policy, &p) ? -errno : 0;
}

static int getattr(pid_t pid, struct lab_sched_attr *a)
{
	memset(a, 0, sizeof(*a));
	return lab_sched_getattr(pid, a, sizeof(*a), 0);
}

static const char *errname(int neg)
{
	static char buf[32];

	switch (-neg) {
	case 0: return "success";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ESRCH: return "ESRCH";
	case E2BIG: return "E2BIG";
	case EFAULT: return "EFAULT";
	default:
		snprintf(buf, sizeof(buf), "errno %d", -neg);
		return buf;
	}
}

static void set_known(void)
{
	if (set_policy(target, SCHED_OTHER, 7, 0))
		ktap_bail("cannot reset the target to NORMAL nice 7: %s", strerror(errno));
}

static void expect_state(struct ktap_sub *s, const char *what, int policy, int nice, int prio)
{
	struct lab_sched_attr a;
	int r = getattr(target, &a);

	ktap_expect(s, r == 0, "%s: sched_getattr failed: %s", what, errname(r));
	if (r)
		return;
	ktap_expect(s, (int)a.sched_policy == policy && a.sched_nice == nice &&
			       (int)a.sched_priority == prio,
		    "%s: state policy %u nice %d prio %u, want %s nice %d prio %d", what,
		    a.sched_policy, a.sched_nice, a.sched_priority, policy_name(policy), nice,
		    prio);
}

/* A call that must fail with @want (negative errno) and leave the target alone. */
static void reject(struct ktap_sub *s, const char *what, int ret, int want)
{
	ktap_expect(s, ret == want, "%s: got %s, want %s", what, errname(ret), errname(want));
	expect_state(s, what, SCHED_OTHER, 7, 0);
	set_known();
}

static void test_roundtrip(void)
{
	/*
	 * want_nice: what sched_getattr reports afterwards. RT tasks report 0
	 * (get_params); SCHED_IDLE ignores sched_nice (__setscheduler_params
	 * only applies it to fair policies), so the known state's 7 stays.
	 */
	static const struct { int policy, val, want_nice; } cases[] = {
		{ SCHED_OTHER, -5, -5 }, { SCHED_OTHER, 19, 19 }, { SCHED_OTHER, -20, -20 },
		{ SCHED_BATCH, 3, 3 }, { SCHED_IDLE, 0, 7 }, { SCHED_IDLE, 3, 7 },
		{ SCHED_FIFO, 1, 0 }, { SCHED_FIFO, 99, 0 }, { SCHED_RR, 50, 0 },
		{ SCHED_OTHER, 0, 0 },
	};
	struct ktap_sub s = { 0 };
	struct sched_param p;
	char what[64];
	int r;

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rt = cases[i].policy == SCHED_FIFO || cases[i].policy == SCHED_RR;

		snprintf(what, sizeof(what), "setattr %s %d", policy_name(cases[i].policy),
			 cases[i].val);
		r = set_policy(target, cases[i].policy, cases[i].val, 0);
		ktap_expect(&s, r == 0, "%s: %s", what, errname(r));
		expect_state(&s, what, cases[i].policy, cases[i].want_nice, rt ? cases[i].val : 0);
		ktap_expect(&s, sched_getscheduler(target) == cases[i].policy,
			    "%s: sched_getscheduler says %d", what, sched_getscheduler(target));
		if (rt && sched_getparam(target, &p) == 0)
			ktap_expect(&s, p.sched_priority == cases[i].val,
				    "%s: sched_getparam says %d", what, p.sched_priority);
		set_known();
	}
	r = setsched(target, SCHED_RR, 10);
	ktap_expect(&s, r == 0, "sched_setscheduler RR 10: %s", errname(r));
	expect_state(&s, "sched_setscheduler RR 10", SCHED_RR, 0, 10);
	set_known();
	r = setpriority(PRIO_PROCESS, target, 10) ? -errno : 0;
	ktap_expect(&s, r == 0, "setpriority 10: %s", errname(r));
	errno = 0;
	ktap_expect(&s, getpriority(PRIO_PROCESS, target) == 10 && !errno,
		    "getpriority after setpriority 10");
	expect_state(&s, "setpriority 10", SCHED_OTHER, 10, 0);
	set_known();
	/* A larger struct with a zero tail is accepted (forward compatibility). */
	{
		struct { struct lab_sched_attr a; char tail[8]; } big;

		memset(&big, 0, sizeof(big));
		big.a.size = sizeof(big);
		big.a.sched_policy = SCHED_BATCH;
		big.a.sched_nice = 2;
		r = attr_call(target, &big.a, 0);
		ktap_expect(&s, r == 0, "size %zu with zero tail: %s", sizeof(big), errname(r));
		expect_state(&s, "size with zero tail", SCHED_BATCH, 2, 0);
		set_known();
	}
	ktap_sub_end(&s, "valid_calls_roundtrip");
}

static void test_setattr_invalid(void)
{
	static const unsigned int bad_policies[] = { 4, 7, 8, 100, 0x7fffffff, 0xffffffff };
	struct ktap_sub s = { 0 };
	struct lab_sched_attr a;
	char what[64];

	set_known();
	for (unsigned int i = 0; i < sizeof(bad_policies) / sizeof(bad_policies[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.sched_policy = bad_policies[i];
		snprintf(what, sizeof(what), "setattr policy %u", bad_policies[i]);
		reject(&s, what, attr_call(target, &a, 0), -EINVAL);
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_flags = 0x100;
	reject(&s, "setattr unknown sched_flags 0x100", attr_call(target, &a, 0), -EINVAL);
	a.sched_flags = 0;
	reject(&s, "setattr syscall flags=1", attr_call(target, &a, 1), -EINVAL);
	reject(&s, "setattr pid -1", attr_call(-1, &a, 0), -EINVAL);
	reject(&s, "setattr NULL attr", syscall(SYS_sched_setattr, target, NULL, 0) ? -errno : 0,
	       -EINVAL);

	/* priorities: RT needs 1..99, normal policies need 0 */
	static const struct { int policy; unsigned int prio; } bad_prio[] = {
		{ SCHED_FIFO, 0 }, { SCHED_FIFO, 100 }, { SCHED_RR, 0 }, { SCHED_RR, 100 },
		{ SCHED_OTHER, 1 }, { SCHED_BATCH, 1 }, { SCHED_IDLE, 1 },
	};
	for (unsigned int i = 0; i < sizeof(bad_prio) / sizeof(bad_prio[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.sched_policy = bad_prio[i].policy;
		a.sched_priority = bad_prio[i].prio;
		snprintf(what, sizeof(what), "setattr %s priority %u",
			 policy_name(bad_prio[i].policy), bad_prio[i].prio);
		reject(&s, what, attr_call(target, &a, 0), -EINVAL);
	}

	/* SCHED_DEADLINE parameters that __checkparam_dl() refuses */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = 6;
	a.sched_runtime = 20 * NSEC_PER_MSEC;
	a.sched_deadline = 10 * NSEC_PER_MSEC;
	a.sched_period = 30 * NSEC_PER_MSEC;
	reject(&s, "setattr DEADLINE runtime > deadline", attr_call(target, &a, 0), -EINVAL);
	a.sched_runtime = 0;
	reject(&s, "setattr DEADLINE runtime 0", attr_call(target, &a, 0), -EINVAL);
	ktap_sub_end(&s, "sched_setattr_rejects_invalid");
}

static void test_setattr_size(void)
{
	struct ktap_sub s = { 0 };
	struct { struct lab_sched_attr a; char tail[8]; } big;
	static const unsigned int sizes[] = { 1, 20, 47, 8192 };
	char what[64];
	int r;

	set_known();
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&big, 0, sizeof(big));
		big.a.size = sizes[i];
		big.a.sched_policy = SCHED_BATCH;
		snprintf(what, sizeof(what), "setattr size %u", sizes[i]);
		r = attr_call(target, &big.a, 0);
		reject(&s, what, r, -E2BIG);
		ktap_expect(&s, big.a.size >= LAB_SCHED_ATTR_SIZE_VER0 && big.a.size <= 4096,
			    "%s: kernel wrote back size %u", what, big.a.size);
	}
	memset(&big, 0, sizeof(big));
	big.a.size = sizeof(big);
	big.a.sched_policy = SCHED_BATCH;
	big.tail[3] = 1;
	r = attr_call(target, &big.a, 0);
	reject(&s, "setattr non-zero bytes past the kernel struct", r, -E2BIG);

	/* sched_getattr validates its size argument with EINVAL */
	r = lab_sched_getattr(target, &big.a, 47, 0);
	ktap_expect(&s, r == -EINVAL, "getattr size 47: %s", errname(r));
	r = lab_sched_getattr(target, &big.a, 8192, 0);
	ktap_expect(&s, r == -EINVAL, "getattr size 8192: %s", errname(r));
	r = lab_sched_getattr(target, &big.a, sizeof(big.a), 1);
	ktap_expect(&s, r == -EINVAL, "getattr flags 1: %s", errname(r));
	r = lab_sched_getattr(-1, &big.a, sizeof(big.a), 0);
	ktap_expect(&s, r == -EINVAL, "getattr pid -1: %s", errname(r));
	/* a bigger user buffer is fine; the kernel reports its own size */
	r = lab_sched_getattr(target, &big.a, sizeof(big), 0);
	ktap_expect(&s, r == 0 && big.a.size >= LAB_SCHED_ATTR_SIZE_VER1 &&
			       big.a.size <= sizeof(big),
		    "getattr with a larger buffer: %s, size %u", errname(r), big.a.size);
	ktap_sub_end(&s, "sched_attr_size_checks");
}

static void test_nice_clamp(void)
{
	static const struct { int in, out; } cases[] = {
		{ 20, 19 }, { -21, -20 }, { 1000, 19 }, { -1000, -20 },
	};
	struct ktap_sub s = { 0 };
	struct lab_sched_attr a;
	char what[64];
	int r;

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set_known();
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.sched_policy = SCHED_OTHER;
		a.sched_nice = cases[i].in;
		snprintf(what, sizeof(what), "setattr sched_nice %d", cases[i].in);
		r = attr_call(target, &a, 0);
		ktap_expect(&s, r == 0, "%s: %s (6.12 clamps, see sched_copy_attr)", what,
			    errname(r));
		expect_state(&s, what, SCHED_OTHER, cases[i].out, 0);

		set_known();
		snprintf(what, sizeof(what), "setpriority %d", cases[i].in);
		r = setpriority(PRIO_PROCESS, target, cases[i].in) ? -errno : 0;
		ktap_expect(&s, r == 0, "%s: %s (kernel/sys.c clamps)", what, errname(r));
		expect_state(&s, what, SCHED_OTHER, cases[i].out, 0);
	}
	set_known();
	ktap_sub_end(&s, "nice_out_of_range_is_clamped");
}

static pid_t unused_pid(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return (kill(p, 0) && errno == ESRCH) ? p : -1;
}

static void test_other_calls(void)
{
	struct ktap_sub s = { 0 };
	struct lab_sched_attr a;
	struct sched_param p = { .sched_priority = 1 };
	pid_t gone = unused_pid();

	set_known();
	reject(&s, "setscheduler policy -1", setsched(target, -1, 0), -EINVAL);
	reject(&s, "setscheduler policy 4", setsched(target, 4, 0), -EINVAL);
	reject(&s, "setscheduler policy 8", setsched(target, 8, 0), -EINVAL);
	reject(&s, "setscheduler FIFO 0", setsched(target, SCHED_FIFO, 0), -EINVAL);
	reject(&s, "setscheduler FIFO 100", setsched(target, SCHED_FIFO, 100), -EINVAL);
	reject(&s, "setscheduler RR 0", setsched(target, SCHED_RR, 0), -EINVAL);
	reject(&s, "setscheduler NORMAL 1", setsched(target, SCHED_OTHER, 1), -EINVAL);
	reject(&s, "setscheduler BATCH 1", setsched(target, SCHED_BATCH, 1), -EINVAL);
	reject(&s, "setscheduler pid -1", setsched(-1, SCHED_OTHER, 0), -EINVAL);
	reject(&s, "setscheduler NULL param",
	       syscall(SYS_sched_setscheduler, target, SCHED_OTHER, NULL) ? -errno : 0, -EINVAL);
	reject(&s, "setparam priority 1 on a NORMAL task",
	       sched_setparam(target, &p) ? -errno : 0, -EINVAL);
	reject(&s, "setpriority which=3", setpriority(3, target, 0) ? -errno : 0, -EINVAL);
	reject(&s, "setpriority who=-5", setpriority(PRIO_PROCESS, -5, 0) ? -errno : 0, -ESRCH);
	ktap_expect(&s, gone > 0, "could not find an unused pid");
	if (gone > 0) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		reject(&s, "setattr unused pid", attr_call(gone, &a, 0), -ESRCH);
		reject(&s, "setscheduler unused pid", setsched(gone, SCHED_OTHER, 0), -ESRCH);
		reject(&s, "setpriority unused pid",
		       setpriority(PRIO_PROCESS, gone, 0) ? -errno : 0, -ESRCH);
		ktap_expect(&s, lab_sched_getattr(gone, &a, sizeof(a), 0) == -ESRCH,
			    "getattr unused pid");
	}
	ktap_sub_end(&s, "other_calls_reject_invalid");
}

/* ---- unprivileged ------------------------------------------------------------------ */

struct uresult {
	int n;
	struct { int ok; char what[120]; } r[32];
};

static void ucheck(struct uresult *u, int ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void ucheck(struct uresult *u, int ok, const char *fmt, ...)
{
	va_list ap;

	if (u->n >= 32)
		return;
	u->r[u->n].ok = ok;
	va_start(ap, fmt);
	vsnprintf(u->r[u->n].what, sizeof(u->r[u->n].what), fmt, ap);
	va_end(ap);
	u->n++;
}

static void self_state(int *policy, int *nice)
{
	struct lab_sched_attr a;

	*policy = -1;
	*nice = 99;
	if (!getattr(0, &a)) {
		*policy = a.sched_policy;
		*nice = a.sched_nice;
	}
}

static void unpriv_child(struct uresult *u)
{
	struct rlimit zero = { 0, 0 };
	struct lab_sched_attr a;
	int r, pol, nice;

	setrlimit(RLIMIT_NICE, &zero);
	setrlimit(RLIMIT_RTPRIO, &zero);
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534) || geteuid() != 65534) {
		ucheck(u, 0, "cannot drop privileges: %s", strerror(errno));
		_exit(0);
	}
	r = setpriority(PRIO_PROCESS, 0, 5) ? -errno : 0;
	ucheck(u, r == 0, "unprivileged nice 0 -> 5 (lowering): %s", errname(r));
	r = setpriority(PRIO_PROCESS, 0, 4) ? -errno : 0;
	self_state(&pol, &nice);
	ucheck(u, r == -EACCES && nice == 5, "setpriority 5 -> 4: %s (want EACCES), nice now %d",
	       errname(r), nice);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = SCHED_OTHER;
	a.sched_nice = 0;
	r = lab_sched_setattr(0, &a, 0);
	self_state(&pol, &nice);
	ucheck(u, r == -EPERM && nice == 5, "setattr nice 5 -> 0: %s (want EPERM), nice now %d",
	       errname(r), nice);
	r = setsched(0, SCHED_FIFO, 1);
	self_state(&pol, &nice);
	ucheck(u, r == -EPERM && pol == SCHED_OTHER,
	       "setscheduler FIFO 1: %s (want EPERM), policy now %d", errname(r), pol);
	r = setsched(0, SCHED_RR, 1);
	self_state(&pol, &nice);
	ucheck(u, r == -EPERM && pol == SCHED_OTHER,
	       "setscheduler RR 1: %s (want EPERM), policy now %d", errname(r), pol);
	r = setpriority(PRIO_PROCESS, target, 10) ? -errno : 0;
	ucheck(u, r == -EPERM, "setpriority on a root-owned task: %s (want EPERM)", errname(r));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = SCHED_BATCH;
	r = lab_sched_setattr(target, &a, 0);
	ucheck(u, r == -EPERM, "setattr on a root-owned task: %s (want EPERM)", errname(r));
	/* SCHED_IDLE may be entered, but leaving it needs the nice rlimit */
	r = setsched(0, SCHED_IDLE, 0);
	self_state(&pol, &nice);
	ucheck(u, r == 0 && pol == SCHED_IDLE, "setscheduler IDLE: %s, policy now %d",
	       errname(r), pol);
	r = setsched(0, SCHED_OTHER, 0);
	self_state(&pol, &nice);
	ucheck(u, r == -EPERM && pol == SCHED_IDLE,
	       "IDLE -> NORMAL without privilege: %s (want EPERM), policy now %d", errname(r),
	       pol);
	_exit(0);
}

static void test_unprivileged(void)
{
	struct uresult *u = shared_alloc(sizeof(*u));
	struct ktap_sub s = { 0 };
	pid_t pid;
	int st;

	set_known();
	pid = fork_child();
	if (pid == 0)
		unpriv_child(u);
	st = reap_child(pid);
	ktap_expect(&s, WIFEXITED(st) && WEXITSTATUS(st) == 0, "unprivileged child crashed");
	ktap_expect(&s, u->n == 9, "unprivileged child ran %d of 9 checks", u->n);
	for (int i = 0; i < u->n; i++)
		ktap_expect(&s, u->r[i].ok, "%s", u->r[i].what);
	expect_state(&s, "target after the unprivileged attempts", SCHED_OTHER, 7, 0);
	ktap_sub_end(&s, "unprivileged_raise_is_eperm");
	munmap(u, sizeof(*u));
}

int main(void)
{
	ktap_plan("setattr_einval", 6);
	ktap_watchdog(60);
	ktap_diag("scheduler: %s", sched_name());
	target = fork_child();
	if (target == 0) {
		for (;;)
			pause();
	}
	set_known();
	test_roundtrip();
	test_setattr_invalid();
	test_setattr_size();
	test_nice_clamp();
	test_other_calls();
	test_unprivileged();
	ktap_finish();
}
