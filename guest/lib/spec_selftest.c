// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side self-test of rsdl_spec.h (pure arithmetic, no scheduler calls):
 * pins the generated matrix rows to the rows printed in sched-rsdl.rst
 * ("Levels, quota and the priority matrix").
 * Run with `make -C guest/tests selftest`.
 */
#include <string.h>
#include "ktap.h"
#include "rsdl_spec.h"

static const struct {
	int nice;
	const char *row;
	int usable;
} spec_rows[] = {
	{ -20, "0000000000000000000000000000000000000000", 40 },
	{ -10, "0001000100100010001001000100010010001001", 29 },
	{ 0, "1010101010101010101010101010101010101010", 20 },
	{ 5, "1101101011010110101101011010110101101011", 15 },
	{ 10, "1110111011011101110110111011101101110110", 11 },
	{ 15, "1111110111111011111011111101111110111110", 6 },
	{ 19, "1111111111111111111101111111111111111111", 1 },
};

int main(void)
{
	int n = sizeof(spec_rows) / sizeof(spec_rows[0]);
	struct ktap_sub s = { 0 };
	char buf[RSDL_LEVELS + 1];

	ktap_plan("spec_selftest", n + 3);
	for (int i = 0; i < n; i++) {
		char name[64];

		rsdl_row_str(rsdl_row(spec_rows[i].nice), buf);
		snprintf(name, sizeof(name), "row_nice_%d", spec_rows[i].nice);
		ktap_check(!strcmp(buf, spec_rows[i].row) &&
			   rsdl_usable_slots(spec_rows[i].nice) == spec_rows[i].usable,
			   name, "got %s (%d usable), spec %s (%d)", buf,
			   rsdl_usable_slots(spec_rows[i].nice), spec_rows[i].row,
			   spec_rows[i].usable);
	}

	/* quota: nice -20 -> 10 x rr, -10 -> 2.5 x rr, -3 -> max(rr, 0.225 rr) = rr */
	ktap_expect(&s, rsdl_quota_ns(-20, 6) == 60000000, "quota(-20,6)=%lld",
		    (long long)rsdl_quota_ns(-20, 6));
	ktap_expect(&s, rsdl_quota_ns(-10, 6) == 15000000, "quota(-10,6)");
	ktap_expect(&s, rsdl_quota_ns(-7, 6) == 7350000, "quota(-7,6)=%lld",
		    (long long)rsdl_quota_ns(-7, 6));
	ktap_expect(&s, rsdl_quota_ns(-3, 6) == 6000000, "quota(-3,6)");
	ktap_expect(&s, rsdl_quota_ns(19, 1) == 1000000, "quota(19,1)");
	ktap_sub_end(&s, "quota_formula");

	memset(&s, 0, sizeof(s));
	ktap_expect(&s, rsdl_entitlement_ns(SCHED_OTHER, 0, 6) == 120000000, "E(0)");
	ktap_expect(&s, rsdl_entitlement_ns(SCHED_OTHER, -20, 1) == 400000000, "E(-20,1)");
	ktap_expect(&s, rsdl_entitlement_ns(SCHED_IDLE, 0, 6) == 6000000, "E(idle)");
	ktap_expect(&s, rsdl_first_slot(rsdl_row(0), 0) == 1, "first slot nice 0");
	ktap_expect(&s, rsdl_first_slot(rsdl_row(19), 0) == 20, "first slot nice 19");
	ktap_expect(&s, rsdl_first_slot(rsdl_row(19), 21) == -1, "no slot after 20 for nice 19");
	ktap_sub_end(&s, "entitlement_and_slots");

	memset(&s, 0, sizeof(s));
	{
		struct rsdl_task t[2] = { { SCHED_OTHER, 0 }, { SCHED_OTHER, 5 } };
		double sh = rsdl_share(t, 2, 0, 6);

		ktap_expect(&s, sh > 0.5714 && sh < 0.5715, "share 0/5 = 20/35 (%f)", sh);
		sh = eevdf_share(t, 2, 1);
		ktap_expect(&s, sh > 0.2464 && sh < 0.2466, "eevdf share 5 vs 0 (%f)", sh);
		ktap_expect(&s, rsdl_wait_bound_ns(t, 2, 0, 6) == 90000000 + 2 * RSDL_TICK_NS,
			    "wait bound");
		ktap_expect(&s, rsdl_sleeper_bound_ns(t, 2, 0, 6) == 2 * (90000000 + 6000000),
			    "sleeper bound");
	}
	ktap_sub_end(&s, "shares_and_bounds");
	ktap_finish();
}
