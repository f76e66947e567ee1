// SPDX-License-Identifier: GPL-2.0
/*
 * resetrun NICE COMMAND [ARG...] - run COMMAND as SCHED_OTHER at nice NICE with
 * SCHED_RESET_ON_FORK, so that its children start at nice 0 (the guest's busybox has no
 * chrt or nice). The soak starts stress-ng's parents at nice -20 this way: they fork their
 * ~40 stressors at once instead of competing with the ones already running (at nice 0 on
 * one vCPU a parent had started 8 of 36 after 60 s), and the stressors run at nice 0.
 */
#include "util.h"

int main(int argc, char **argv)
{
	struct sched_param sp = { 0 };

	if (argc < 3) {
		fprintf(stderr, "usage: resetrun NICE COMMAND [ARG...]\n");
		return 2;
	}
	if (sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp))
		die("sched_setscheduler");
	set_nice(atoi(argv[1]));
	execvp(argv[2], argv + 2);
	die(argv[2]);
	return 1;
}
