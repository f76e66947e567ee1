// SPDX-License-Identifier: GPL-2.0
/*
 * sched_state - which scheduler is in charge, as the interfaces promise.
 *
 * Expected: sched-rsdl.rst, Interfaces (rsdl=off, the boot log line,
 * /sys/kernel/rsdl/state, rr_interval default 6 and present only while RSDL
 * runs, the debugfs header, the rsdl.* lines of /proc/<pid>/sched). A failure
 * means the boot is not running the scheduler it was booted for, or an
 * interface is missing or present where it should not be.
 *
 * `sched_state rsdl` (suite name rsdl_state, RSDL boots):
 *  1. state_enabled: /sys/kernel/rsdl/state reads "enabled" and cannot be
 *     written (read-only attribute).
 *  2. rr_interval_default: /proc/sys/kernel/rr_interval exists and reads 6.
 *  3. boot_log: the kernel log has "sched: RSDL 0.30 enabled (rr_interval 6 ms)".
 *  4. debugfs_header: /sys/kernel/debug/sched/rsdl starts with
 *     "rr_interval_ms=6 enabled=1".
 *  5. proc_sched_fields: /proc/self/sched has every rsdl.* line of the
 *     interfaces and a policy/prio consistent with SCHED_NORMAL.
 * `sched_state eevdf` (suite name eevdf_state, EEVDF boots, with or without
 * the RSDL series built in):
 *  1. state_absent_or_disabled: /sys/kernel/rsdl/state is absent or "disabled".
 *  2. rr_interval_absent: no /proc/sys/kernel/rr_interval.
 *  3. boot_log: no "sched: RSDL ... enabled" line; if the state file exists,
 *     "sched: RSDL disabled by rsdl=off, EEVDF in charge" is there.
 *  4. debugfs_header: /sys/kernel/debug/sched/rsdl absent, or "enabled=0".
 *  5. proc_sched_fields: /proc/self/sched has no rsdl.* line and has the
 *     EEVDF fields (se.vruntime, se.slice).
 */
#include "util.h"

static char klog[1 << 20];

static const char *const rsdl_keys[] = {
	"rsdl.level", "rsdl.time_slice", "rsdl.quota", "rsdl.rotation",
	"rsdl.cpu_rotation", "rsdl.array", "rsdl.usable_slots",
};

int main(int argc, char **argv)
{
	int want_rsdl = argc > 1 && !strcmp(argv[1], "rsdl");
	char buf[4096];
	struct sched_snap snap;
	ssize_t r;
	int have_state;

	if (argc < 2 || (strcmp(argv[1], "rsdl") && strcmp(argv[1], "eevdf"))) {
		fprintf(stderr, "usage: %s rsdl|eevdf\n", argv[0]);
		return 2;
	}
	ktap_plan(want_rsdl ? "rsdl_state" : "eevdf_state", 5);
	ktap_watchdog(30);
	ktap_diag("testing for: %s; the kernel says: %s", want_rsdl ? "RSDL" : "EEVDF",
		  sched_name());
	r = read_file(RSDL_STATE_PATH, buf, sizeof(buf));
	have_state = r >= 0;
	if (r >= 0)
		rtrim(buf);
	ktap_diag("%s: %s", RSDL_STATE_PATH, r >= 0 ? buf : "absent");

	if (want_rsdl) {
		int w = (int)write_file(RSDL_STATE_PATH, "disabled");
		char again[64] = "";

		read_file(RSDL_STATE_PATH, again, sizeof(again));
		rtrim(again);
		ktap_check(r >= 0 && !strcmp(buf, "enabled") && w < 0 && !strcmp(again, "enabled"),
			   "state_enabled", "state '%s', write returned %d, state after '%s'",
			   r >= 0 ? buf : "absent", w, again);
	} else {
		ktap_check(r < 0 || !strcmp(buf, "disabled"), "state_absent_or_disabled",
			   "state '%s'", buf);
	}

	{
		long long v;
		int e = read_ll(RR_INTERVAL_PATH, &v);

		ktap_diag("%s: %s%lld", RR_INTERVAL_PATH, e ? "absent/unreadable " : "", e ? 0 : v);
		if (want_rsdl)
			ktap_check(!e && v == RSDL_RR_DEFAULT_MS, "rr_interval_default",
				   "rr_interval %s %lld, want %d", e ? "unreadable" : "=", v,
				   RSDL_RR_DEFAULT_MS);
		else
			ktap_check(!file_exists(RR_INTERVAL_PATH), "rr_interval_absent",
				   "%s exists on EEVDF", RR_INTERVAL_PATH);
	}

	{
		int n = klog_read(klog, sizeof(klog));
		char *en = n > 0 ? strstr(klog, "sched: RSDL 0.30 enabled (rr_interval 6 ms)") : NULL;
		char *any_en = n > 0 ? strstr(klog, "sched: RSDL") : NULL;
		char *dis = n > 0 ? strstr(klog, "sched: RSDL disabled by rsdl=off, EEVDF in charge")
				  : NULL;

		if (any_en) {
			char line[160];

			snprintf(line, sizeof(line), "%s", any_en);
			*strchrnul(line, '\n') = '\0';
			ktap_diag("boot log: %s", line);
		}
		if (n < 0)
			ktap_fail("boot_log", "cannot read the kernel log: %s", strerror(-n));
		else if (want_rsdl)
			ktap_check(en != NULL, "boot_log", "no 'sched: RSDL 0.30 enabled "
				   "(rr_interval 6 ms)' line in %d bytes of log", n);
		else
			ktap_check(!strstr(klog, "sched: RSDL 0.30 enabled") &&
					   (!have_state || dis != NULL),
				   "boot_log", "RSDL enabled line present, or state file without the "
				   "'disabled by rsdl=off' line");
	}

	r = read_file(RSDL_DEBUGFS_PATH, buf, sizeof(buf));
	if (r >= 0) {
		char first[128];

		snprintf(first, sizeof(first), "%.127s", buf);
		*strchrnul(first, '\n') = '\0';
		ktap_diag("%s: %s", RSDL_DEBUGFS_PATH, first);
	} else {
		ktap_diag("%s: %s", RSDL_DEBUGFS_PATH, strerror(-r));
	}
	if (want_rsdl)
		ktap_check(r >= 0 && !strncmp(buf, "rr_interval_ms=6 enabled=1", 26) &&
				   (buf[26] == '\n' || buf[26] == ' '),
			   "debugfs_header", "%s does not start with 'rr_interval_ms=6 enabled=1'",
			   RSDL_DEBUGFS_PATH);
	else
		ktap_check(r < 0 || strstr(buf, "enabled=0") != NULL, "debugfs_header",
			   "%s says RSDL is enabled", RSDL_DEBUGFS_PATH);

	{
		struct ktap_sub s = { 0 };
		long long v;

		if (sched_snap_read(getpid(), &snap))
			ktap_bail("cannot read /proc/self/sched");
		for (unsigned int i = 0; i < sizeof(rsdl_keys) / sizeof(rsdl_keys[0]); i++) {
			int has = !sched_snap_get(&snap, rsdl_keys[i], &v);

			if (want_rsdl)
				ktap_expect(&s, has, "%s missing from /proc/self/sched", rsdl_keys[i]);
			else
				ktap_expect(&s, !has, "%s present on EEVDF", rsdl_keys[i]);
		}
		ktap_expect(&s, !sched_snap_get(&snap, "policy", &v) && v == SCHED_OTHER,
			    "policy line %lld, want 0", v);
		if (want_rsdl) {
			long long lvl = -1, q = -1, us = -1;

			sched_snap_get(&snap, "rsdl.level", &lvl);
			sched_snap_get(&snap, "rsdl.quota", &q);
			sched_snap_get(&snap, "rsdl.usable_slots", &us);
			ktap_diag("self: rsdl.level %lld, rsdl.quota %lld, rsdl.usable_slots %lld", lvl,
				  q, us);
			ktap_expect(&s, lvl >= 0 && lvl < RSDL_LEVELS, "rsdl.level %lld", lvl);
		} else {
			ktap_expect(&s, !sched_snap_get(&snap, "se.vruntime", &v),
				    "se.vruntime missing");
			ktap_expect(&s, !sched_snap_get(&snap, "se.slice", &v), "se.slice missing");
		}
		ktap_sub_end(&s, "proc_sched_fields");
	}
	ktap_finish();
}
