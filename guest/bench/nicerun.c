// SPDX-License-Identifier: GPL-2.0
/*
 * nicerun NICE COMMAND [ARG...] - run COMMAND at nice level NICE (absolute, may be
 * negative; the guest's busybox has no nice applet).
 */
#include "util.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: nicerun NICE COMMAND [ARG...]\n");
		return 2;
	}
	set_nice(atoi(argv[1]));
	execvp(argv[2], argv + 2);
	die(argv[2]);
	return 1;
}
