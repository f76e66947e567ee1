// SPDX-License-Identifier: GPL-2.0
/*
 * fiforun PRIO COMMAND [ARG...] - run COMMAND as SCHED_FIFO at PRIO with
 * SCHED_RESET_ON_FORK, so that its children start as SCHED_OTHER at nice 0 (the guest's
 * busybox has no chrt). The soak starts stress-ng's parent this way: it forks its ~40
 * stressors at once instead of competing with the ones already running (at nice 0 on one
 * vCPU it had started 8 of them after 60 s).
 */
#include "bench.h"

int main(int argc, char **argv)
{
	struct sched_param sp = { 0 };

	if (argc < 3) {
		fprintf(stderr, "usage: fiforun PRIO COMMAND [ARG...]\n");
		return 2;
	}
	sp.sched_priority = atoi(argv[1]);
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		die("sched_setscheduler");
	execvp(argv[2], argv + 2);
	die(argv[2]);
	return 1;
}
