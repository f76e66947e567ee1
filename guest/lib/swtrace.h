/* SPDX-License-Identifier: GPL-2.0 */
/*
 * swtrace.h - who ran on a CPU, from the kernel's sched_switch events; and the
 * pieces any trace reader needs: a private tracefs instance (trace_instance_*()),
 * its lines (trace_for_each_line()) and an event's time (trace_event_at()).
 *
 * Uses the trace instance "lab" when the boot enabled sched_switch in it
 * (trace_instance=lab^traceoff,sched:sched_switch on the suite's command
 * line), else the top-level buffer with the event enabled at run time. The
 * clock is set to "mono" so that event times are CLOCK_MONOTONIC, like
 * now_ns().
 */
#ifndef LAB_SWTRACE_H
#define LAB_SWTRACE_H

#include <sys/stat.h>
#include "util.h"

static char swtrace_dir[96];
static int swtrace_boot_enabled;

static inline void swtrace_path(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "%s/%s", swtrace_dir, file);
}

/* Stop tracing and empty the buffer */
static inline void swtrace_stop(void)
{
	char path[160];
	int fd;

	if (!swtrace_dir[0])
		return;
	swtrace_path(path, sizeof(path), "tracing_on");
	write_file(path, "0");
	if (!swtrace_boot_enabled) {
		swtrace_path(path, sizeof(path), "events/sched/sched_switch/enable");
		write_file(path, "0");
	}
	swtrace_path(path, sizeof(path), "trace");
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
}

/* Find the buffer, set it up (mono clock, @kb per CPU), empty and off; 0 or -errno */
static inline int swtrace_setup(int kb)
{
	char path[160], buf[16];
	ssize_t r;

	if (read_file("/sys/kernel/tracing/instances/lab/events/sched/sched_switch/enable",
		      buf, sizeof(buf)) > 0 && buf[0] == '1') {
		snprintf(swtrace_dir, sizeof(swtrace_dir), "/sys/kernel/tracing/instances/lab");
		swtrace_boot_enabled = 1;
	} else if (file_exists("/sys/kernel/tracing/events/sched/sched_switch/enable")) {
		snprintf(swtrace_dir, sizeof(swtrace_dir), "/sys/kernel/tracing");
	} else {
		return -ENOENT;
	}
	swtrace_stop();
	swtrace_path(path, sizeof(path), "trace_clock");
	r = write_file(path, "mono");
	if (r < 0)
		return (int)r;
	swtrace_path(path, sizeof(path), "buffer_size_kb");
	snprintf(buf, sizeof(buf), "%d", kb);
	r = write_file(path, buf);
	if (r < 0)
		return (int)r;
	if (!swtrace_boot_enabled) {
		swtrace_path(path, sizeof(path), "events/sched/sched_switch/enable");
		r = write_file(path, "1");
		if (r < 0)
			return (int)r;
	}
	return 0;
}

static inline int swtrace_on(int on)
{
	char path[160];

	ssize_t r;

	swtrace_path(path, sizeof(path), "tracing_on");
	r = write_file(path, on ? "1" : "0");
	return r < 0 ? (int)r : 0;
}

struct swtrace_event {
	int cpu;
	int64_t t;		/* CLOCK_MONOTONIC, ns */
	pid_t prev, next;
	char prev_state;	/* first letter of prev_state: R (preempted), S, D, ... */
};

/*
 * In one line of a trace file, the event @tag (": sched_switch: "): its time (*@t,
 * ns of the trace clock) and where its fields start, or NULL if the line is not that
 * event. "<task>-<pid> [cpu] <flags> <sec>.<usec>: <event>: <fields>": the time is the
 * last word before the tag.
 */
static inline const char *trace_event_at(const char *line, const char *tag, int64_t *t)
{
	const char *ev = strstr(line, tag), *ts;
	unsigned long long sec, usec;

	if (!ev)
		return NULL;
	for (ts = ev; ts > line && ts[-1] != ' '; ts--)
		;
	if (sscanf(ts, "%llu.%llu", &sec, &usec) != 2)
		return NULL;
	*t = (int64_t)sec * NSEC_PER_SEC + (int64_t)usec * 1000;
	return ev + strlen(tag);
}

/* Parse one line of the trace file; 1 if it is a sched_switch event */
static inline int swtrace_parse_line(const char *line, struct swtrace_event *e)
{
	const char *sw = trace_event_at(line, ": sched_switch: ", &e->t), *p;
	int prev, next;

	if (!sw)
		return 0;
	p = strstr(line, "] ");
	if (!p || sscanf(p - 4, "[%d]", &e->cpu) != 1)
		return 0;
	p = strstr(sw, " prev_pid=");
	if (!p || sscanf(p, " prev_pid=%d", &prev) != 1)
		return 0;
	p = strstr(p, " prev_state=");
	if (!p)
		return 0;
	e->prev_state = p[12];
	p = strstr(p, " next_pid=");
	if (!p || sscanf(p, " next_pid=%d", &next) != 1)
		return 0;
	e->prev = prev;
	e->next = next;
	return 1;
}

/*
 * Call @fn for every line of the trace file @path, NUL-terminated without its '\n', in
 * order (a line longer than half of the 64 KiB buffer is dropped); 0 or -errno.
 */
static inline int trace_for_each_line(const char *path, void (*fn)(char *line, void *arg),
				      void *arg)
{
	char buf[65536];
	size_t carry = 0;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r = read(fd, buf + carry, sizeof(buf) - 1 - carry);
		char *line, *nl;

		if (r <= 0)
			break;
		buf[carry + r] = '\0';
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			fn(line, arg);
			line = nl + 1;
		}
		carry = strlen(line);
		memmove(buf, line, carry);
		if (carry > sizeof(buf) / 2)
			carry = 0;	/* an absurd line: drop it */
	}
	close(fd);
	return 0;
}

struct swtrace_each {
	void (*fn)(const struct swtrace_event *, void *);
	void *arg;
	long n;
};

static inline void swtrace_each_line(char *line, void *arg)
{
	struct swtrace_each *each = arg;
	struct swtrace_event e;

	if (swtrace_parse_line(line, &e)) {
		each->fn(&e, each->arg);
		each->n++;
	}
}

/*
 * Call @fn for every sched_switch event of the buffer, in order; the number
 * of events, or -errno. Tracing should be off.
 */
static inline long swtrace_for_each(void (*fn)(const struct swtrace_event *, void *), void *arg)
{
	struct swtrace_each each = { .fn = fn, .arg = arg };
	char path[160];
	int r;

	swtrace_path(path, sizeof(path), "trace");
	r = trace_for_each_line(path, swtrace_each_line, &each);
	return r < 0 ? r : each.n;
}

/* Events the buffer of @dir lost (overrun) since it was emptied, from per_cpu/cpuN/stats */
static inline long trace_overrun(const char *dir, int cpu)
{
	char path[192], buf[1024], *p;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", dir, cpu);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "overrun: ");
	return p ? atol(p + 9) : -1;
}

static inline long swtrace_overrun(int cpu)
{
	return trace_overrun(swtrace_dir, cpu);
}

/* ---- a private trace instance (tracefs instances/NAME) ---------------------------- */

/* Write @val to the file @file of the trace directory @dir; 0 or -errno */
static inline int trace_dir_write(const char *dir, const char *file, const char *val)
{
	return write_file_at(dir, file, val);
}

/* Tracing off, the events off, the instance @dir removed (an exit cleanup) */
static inline void trace_instance_remove(const char *dir)
{
	if (!file_exists(dir))
		return;
	trace_dir_write(dir, "tracing_on", "0");
	trace_dir_write(dir, "events/enable", "0");
	rmdir(dir);
}

/*
 * Create the instance @dir (/sys/kernel/tracing/instances/NAME), tracing off, with the
 * mono clock (event times comparable with now_ns()), @kb of buffer per CPU and the
 * event @event ("system/name") enabled; 0, or -errno (-ENOENT: no such event).
 */
static inline int trace_instance_setup(const char *dir, int kb, const char *event)
{
	char buf[160];
	int r;

	trace_instance_remove(dir);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	r = trace_dir_write(dir, "tracing_on", "0");
	if (!r)
		r = trace_dir_write(dir, "trace_clock", "mono");
	snprintf(buf, sizeof(buf), "%d", kb);
	if (!r)
		r = trace_dir_write(dir, "buffer_size_kb", buf);
	snprintf(buf, sizeof(buf), "events/%s/enable", event);
	if (!r)
		r = trace_dir_write(dir, buf, "1");
	return r;
}

/* Empty the buffer of @dir and start tracing; 0 or -errno */
static inline int trace_instance_start(const char *dir)
{
	char path[256];
	int fd;

	trace_dir_write(dir, "tracing_on", "0");
	snprintf(path, sizeof(path), "%s/trace", dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	close(fd);
	return trace_dir_write(dir, "tracing_on", "1");
}

#endif /* LAB_SWTRACE_H */
