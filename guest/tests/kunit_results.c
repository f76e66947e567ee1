// SPDX-License-Identifier: GPL-2.0
/*
 * kunit_results - report the kernel's own KUnit suites as subtests.
 *
 * Expected: every KUnit case passes; the rsdl suite pins the matrix rows,
 * usable slots, quota and E(p) of sched-rsdl.rst ("Levels, quota and the
 * priority matrix"). A failure names the kernel suite that failed, or says
 * the rsdl suite did not run.
 *
 * Reads /sys/kernel/debug/kunit/<suite>/results (KTAP written by the kernel
 * after the boot-time run) and reports one subtest per suite. A suite fails
 * if any line says "not ok", if fewer test-case results than its plan are
 * present (the suite never ran, e.g. kunit.enable=0 or a filter), or if it is
 * an RSDL suite (name starting with "rsdl") with a skipped case. Skipped cases
 * of other suites are listed as diagnostics.
 *
 * One more subtest, rsdl_suite_present, fails unless /sys/kernel/rsdl/state
 * says "enabled" and a suite named rsdl* exists (it needs CONFIG_KUNIT=y and
 * CONFIG_KUNIT_DEBUGFS=y in the RSDL lab config).
 */
#include <dirent.h>
#include "util.h"

#define KUNIT_DIR "/sys/kernel/debug/kunit"
#define MAX_SUITES 256

struct suite {
	char name[256];
	int plan, cases, notok, skipped, suite_ok;
	char first_bad[160];
};

static void parse_results(struct suite *su, char *buf)
{
	char *line, *save;

	su->plan = -1;
	su->suite_ok = -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int indent = 0, n;
		char *p = line;

		while (*p == ' ') {
			indent++;
			p++;
		}
		/* case plan "    1..N" (indent 4); the top-level "1..1" is ignored */
		if (indent == 4 && sscanf(p, "1..%d", &n) == 1 && su->plan < 0) {
			su->plan = n;
			continue;
		}
		if (!strncmp(p, "not ok ", 7)) {
			su->notok++;
			if (!su->first_bad[0])
				snprintf(su->first_bad, sizeof(su->first_bad), "%s", p);
			if (indent == 0)
				su->suite_ok = 0;
			else if (indent == 4)
				su->cases++;
			continue;
		}
		if (!strncmp(p, "ok ", 3)) {
			if (indent == 0)
				su->suite_ok = 1;
			else if (indent == 4) {
				su->cases++;
				if (strstr(p, "# SKIP"))
					su->skipped++;
			}
		}
	}
}

int main(void)
{
	struct suite *suites = calloc(MAX_SUITES, sizeof(*suites));
	int n = 0, rsdl = sched_is_rsdl(), have_rsdl = 0;
	DIR *d = opendir(KUNIT_DIR);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)) && n < MAX_SUITES) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(suites[n++].name, sizeof(suites[0].name), "%s", e->d_name);
		}
		closedir(d);
	}
	ktap_plan("kunit_results", n + 1);
	ktap_watchdog(30);
	ktap_diag("scheduler: %s; %s: %s, %d suites", sched_name(), KUNIT_DIR,
		  d ? "present" : "absent", n);
	for (int i = 0; i < n; i++) {
		static char buf[1 << 20];
		char path[400], name[280];
		struct suite *su = &suites[i];
		int is_rsdl = !strncmp(su->name, "rsdl", 4);

		have_rsdl |= is_rsdl;
		snprintf(path, sizeof(path), "%s/%s/results", KUNIT_DIR, su->name);
		snprintf(name, sizeof(name), "kunit_%s", su->name);
		if (read_file(path, buf, sizeof(buf)) < 0) {
			ktap_fail(name, "cannot read %s", path);
			continue;
		}
		parse_results(su, buf);
		ktap_diag("suite %s: plan %d, %d case results, %d not ok, %d skipped, suite line %s",
			  su->name, su->plan, su->cases, su->notok, su->skipped,
			  su->suite_ok < 0 ? "missing" : su->suite_ok ? "ok" : "not ok");
		if (su->skipped && !is_rsdl)
			ktap_diag("suite %s has %d skipped cases", su->name, su->skipped);
		if (su->notok)
			ktap_fail(name, "%s", su->first_bad);
		else if (su->plan <= 0 || su->cases < su->plan)
			ktap_fail(name, "%d case results for a plan of %d (suite not run?)", su->cases,
				  su->plan);
		else if (su->suite_ok != 1)
			ktap_fail(name, "no suite result line");
		else if (is_rsdl && su->skipped)
			ktap_fail(name, "%d RSDL cases skipped", su->skipped);
		else
			ktap_ok(name);
	}
	/* suite.list runs this program on RSDL boots only; elsewhere it cannot pass */
	if (rsdl)
		ktap_check(have_rsdl, "rsdl_suite_present",
			   "RSDL is enabled but no KUnit suite named rsdl* in %s", KUNIT_DIR);
	else
		ktap_fail("rsdl_suite_present", "RSDL is not enabled on this kernel");
	ktap_finish();
}
