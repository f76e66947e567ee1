/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktap.h - KTAP output for the in-guest test programs.
 *
 * One program = one plan: ktap_plan(N) prints "TAP version 13" and "1..N";
 * every subtest ends in exactly one ktap_ok()/ktap_fail()/ktap_check() line;
 * "# " lines carry diagnostics (measured vs expected values).
 * ktap_finish() reports subtests that never ran as "not ok" and exits:
 *   0 = every subtest passed, 1 = something failed.
 *
 * Cleanups (restore a sysctl, kill children, bring a CPU back online) are
 * registered with ktap_on_exit() and run from ktap_finish(), from the
 * watchdog (SIGALRM) and on SIGTERM/SIGINT, so a failing or hung test never
 * leaves the guest in a state that changes the tests after it.
 */
#ifndef LAB_KTAP_H
#define LAB_KTAP_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define KTAP_MAX_CHILDREN 4096
#define KTAP_MAX_CLEANUPS 16

static int ktap_planned;
static int ktap_done;
static int ktap_nfail;
static int ktap_bailed;
static pid_t ktap_main_pid;
static const char *ktap_prog = "test";

/* Children to SIGKILL on exit/timeout (see ktap_track_child). */
static pid_t ktap_children[KTAP_MAX_CHILDREN];
static int ktap_nchildren;

static void (*ktap_cleanups[KTAP_MAX_CLEANUPS])(void);
static int ktap_ncleanups;

static inline void ktap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void ktap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static inline void ktap_track_child(pid_t pid)
{
	if (pid > 0 && ktap_nchildren < KTAP_MAX_CHILDREN)
		ktap_children[ktap_nchildren++] = pid;
}

static inline void ktap_untrack_child(pid_t pid)
{
	for (int i = 0; i < ktap_nchildren; i++) {
		if (ktap_children[i] == pid) {
			ktap_children[i] = ktap_children[--ktap_nchildren];
			return;
		}
	}
}

/* SIGKILL and reap every tracked child. Async-signal-safe. */
static inline void ktap_kill_children(void)
{
	for (int i = 0; i < ktap_nchildren; i++)
		kill(ktap_children[i], SIGKILL);
	for (int i = 0; i < ktap_nchildren; i++)
		waitpid(ktap_children[i], NULL, 0);
	ktap_nchildren = 0;
}

static inline void ktap_on_exit(void (*fn)(void))
{
	if (ktap_ncleanups < KTAP_MAX_CLEANUPS)
		ktap_cleanups[ktap_ncleanups++] = fn;
}

static inline void ktap_run_cleanups(void)
{
	ktap_kill_children();
	while (ktap_ncleanups > 0)
		ktap_cleanups[--ktap_ncleanups]();
}

static inline void ktap_write_str(const char *s)
{
	ssize_t r = write(STDOUT_FILENO, s, strlen(s));
	(void)r;
}

static inline void ktap_fatal_signal(int sig)
{
	if (getpid() != ktap_main_pid)
		_exit(128 + sig);
	ktap_write_str(sig == SIGALRM ? "# watchdog: time limit exceeded\n"
				      : "# killed by a signal\n");
	ktap_run_cleanups();
	ktap_write_str("Bail out! ");
	ktap_write_str(ktap_prog);
	ktap_write_str(sig == SIGALRM ? " timed out\n" : " interrupted\n");
	_exit(1);
}

/* Fail the whole program (with cleanups) if it runs longer than @seconds. */
static inline void ktap_watchdog(unsigned int seconds)
{
	alarm(seconds);
}

static inline void ktap_plan(const char *prog, int n)
{
	struct sigaction sa;

	ktap_prog = prog;
	ktap_main_pid = getpid();
	/* Line buffering: children forked later must not inherit unflushed output. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ktap_fatal_signal;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	ktap_planned = n;
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

static inline void ktap_result(bool ok, const char *name, const char *reason)
{
	ktap_done++;
	if (!ok)
		ktap_nfail++;
	if (ok || !reason || !*reason)
		printf("%s %d %s\n", ok ? "ok" : "not ok", ktap_done, name);
	else
		printf("not ok %d %s # %s\n", ktap_done, name, reason);
	fflush(stdout);
}

static inline void ktap_ok(const char *name) { ktap_result(true, name, NULL); }

static inline void ktap_fail(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void ktap_fail(const char *name, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ktap_result(false, name, buf);
}

/*
 * "ok N name # SKIP reason": the subtest does not apply here (the lab's verdict,
 * scripts/ktap-verdict.sh, still counts a skip as a failure, so suite.list runs
 * a program only on the boots where its subtests apply).
 */
static inline void ktap_skip(const char *name, const char *reason)
{
	ktap_done++;
	printf("ok %d %s # SKIP %s\n", ktap_done, name, reason);
	fflush(stdout);
}

/* ok if @cond, otherwise not ok with a reason; returns @cond. */
static inline bool ktap_check(bool cond, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline bool ktap_check(bool cond, const char *name, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (cond) {
		ktap_ok(name);
		return true;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ktap_result(false, name, buf);
	return false;
}

/*
 * Sub-check accumulator: a subtest made of many small assertions. Each failed
 * assertion prints a "# FAIL ..." diagnostic; the subtest result is the AND.
 */
struct ktap_sub {
	int nfail;
	char first[256];
};

static inline bool ktap_expect(struct ktap_sub *s, bool cond, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline bool ktap_expect(struct ktap_sub *s, bool cond, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (cond)
		return true;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ktap_diag("FAIL %s", buf);
	if (!s->nfail++)
		snprintf(s->first, sizeof(s->first), "%s", buf);
	return false;
}

static inline void ktap_sub_end(struct ktap_sub *s, const char *name)
{
	if (!s->nfail)
		ktap_ok(name);
	else if (s->nfail == 1)
		ktap_fail(name, "%s", s->first);
	else
		ktap_fail(name, "%s (+%d more)", s->first, s->nfail - 1);
}

/* Report missing subtests, run cleanups, exit 0 only if all passed. */
static inline void __attribute__((noreturn)) ktap_finish(void)
{
	alarm(0);
	ktap_run_cleanups();
	while (ktap_done < ktap_planned)
		ktap_result(false, "not_run", "program ended before this subtest");
	if (ktap_done > ktap_planned) {
		ktap_diag("BUG: %d results for a plan of %d", ktap_done, ktap_planned);
		ktap_nfail++;
	}
	ktap_diag("%s: %d/%d passed%s", ktap_prog, ktap_done - ktap_nfail, ktap_done,
		  ktap_bailed ? " (aborted)" : "");
	fflush(stdout);
	exit(ktap_nfail || ktap_bailed ? 1 : 0);
}

/* Abort the program: remaining subtests are reported not ok by ktap_finish. */
static inline void __attribute__((noreturn)) ktap_bail(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ktap_diag("fatal: %s", buf);
	ktap_bailed = 1;
	ktap_finish();
}

/*
 * A fatal error outside a subtest's own checks (mmap, fork, a missing calibration). The
 * test programs bail out: "# fatal: ..." and the rest of the plan not ok (ktap_bail). The
 * bench programs print key=value lines, not KTAP: they are built with -DLAB_NO_KTAP
 * (guest/bench/Makefile) and print "error: ..." on stderr and exit 1.
 */
static inline void __attribute__((noreturn, format(printf, 1, 2))) lab_fatal(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
#ifdef LAB_NO_KTAP
	fprintf(stderr, "error: %s\n", buf);
	exit(1);
#else
	ktap_bail("%s", buf);
#endif
}

/* lab_fatal("@what: strerror(errno)") */
static inline void __attribute__((noreturn)) die(const char *what)
{
	lab_fatal("%s: %s", what, strerror(errno));
}

#endif /* LAB_KTAP_H */
