/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.h - the guest library in one include, for the test programs
 * (guest/tests) and the bench programs (guest/bench). Header-only (static
 * inline) so every program stays one static binary. The topics:
 *   ktap.h       KTAP output, cleanups at exit, lab_fatal()/die()
 *   timing.h     clocks, sleeping, busy loops (also the calibrated one)
 *   files.h      whole-file reads and writes
 *   procfs.h     scheduler state and rr_interval, /proc/<pid>/sched, schedstat,
 *                stat, the RSDL debugfs file, the kernel log, the lab's clock
 *   tasks.h      CPUs and affinity, policies and nice, children
 *   hogs.h       hogs, gated children, unit hogs, the wake-latency sampler
 *   stats.h      percentiles, latency summaries, Jain's index, random numbers
 *   rsdl_spec.h  expected values from sched-rsdl.rst and EEVDF's weights
 * Not included here (state of their own): cgroup.h (cgroup v2), swtrace.h
 * (tracefs: sched_switch events, private instances, event lines).
 */
#ifndef LAB_UTIL_H
#define LAB_UTIL_H

/* the C library the programs use, besides what the topic headers need */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktap.h"
#include "timing.h"
#include "files.h"
#include "procfs.h"
#include "tasks.h"
#include "hogs.h"
#include "stats.h"
#include "rsdl_spec.h"

#endif /* LAB_UTIL_H */
