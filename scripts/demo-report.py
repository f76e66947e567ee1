#!/usr/bin/env python3
# demo-report.py RESULTS_DIR: turn the demo boots in RESULTS_DIR/raw/rep<N>-<rsdl|eevdf>/ into
# CSV files (csv/), PNG plots (plots/, gnuplot) and report.md with RSDL and EEVDF side by side:
# median over the repetitions, spread (min-max), and the ratio of the medians RSDL/EEVDF. Values stay
# the guest's text; they are compared and averaged as numbers (their leading number).
import glob, os, pathlib, re, subprocess, sys, tempfile
NUM = r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"
def num(x):  # a value as a number: its leading number, else 0
    return x if not isinstance(x, str) else float(m[0]) if (m := re.match(r"\s*" + NUM, x)) else 0.0
def med(v):  # median: the middle value as written, or the mean of the two middle ones; 0 for none
    a, h = sorted(v, key=num), len(v) // 2
    return a[h] if len(a) % 2 else (num(a[h - 1]) + num(a[h])) / 2 if a else 0
def pr(x): return x if isinstance(x, str) else "%d" % x if x == int(x) else "%.6g" % x  # as awk prints
def fmt(x):  # a table cell: integers as such, 3 significant digits below 10, else one decimal
    return "%d" % x if (x := num(x)) == int(x) else "%.3g" % x if -10 < x < 10 else "%.1f" % x
def read(p): return pathlib.Path(p).read_text(encoding="utf-8", errors="surrogateescape").replace("\r", "") if os.path.isfile(p) else ""
def write(p, text): pathlib.Path(p).write_text(text, encoding="utf-8", errors="surrogateescape")
def idx(t, name): return tab[t][0].index(name) if tab[t] and name in tab[t][0] else 1 << 30  # column of table T
def col(t, name): return [r[i] if (i := idx(t, name)) < len(r) else "" for r in tab[t][1:]]  # "" where a row has none

out = sys.argv[1] if len(sys.argv) == 2 else sys.exit("usage: demo-report.py RESULTS_DIR")
raw, csvd, plots = (f"{out}/{d}" for d in ("raw", "csv", "plots"))
for d in (csvd, plots): os.makedirs(d, exist_ok=True)
boots = sorted((os.path.basename(p) for s in ("rsdl", "eevdf") for p in glob.glob(f"{glob.escape(raw)}/rep*-{s}")),
               key=lambda b: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", b)])  # sort -V
boots or sys.exit(f"[report] error: no boots in {raw}")
# 1. CSV: one file per record type ("TYPE key=value ..." lines of the guest), rep and sched first
ktap = {b: read(f"{raw}/{b}/ktap.log") for b in boots}
recs = [(b.split("-")[0][3:], b.split("-", 1)[1], f + [""] * 8) for b in boots for f in map(str.split, ktap[b].split("\n")) if f]
tab = {}  # type -> rows, the first one the column names (those of the type's first record)
for t in "calibrate snag share shares cyclictest bench pickcost".split():
    kv = [(rep, s, [p for x in f[1:] if x and (p := x.split("=", 1))[0] != "sched"]) for rep, s, f in recs if f[0] == t and "=" in f[1]]
    tab[t] = kv and [["rep", "sched"] + [p[0] for p in kv[0][2]]] + [[rep, s] + [p[-1].replace(",", ";") for p in x] for rep, s, x in kv]
# a ping-pong that got no round trip in the window has no time per round trip (not 0)
for r, o in zip(tab["pickcost"][1:], col("pickcost", "pingpong_ops")):
    if (u := idx("pickcost", "pingpong_us")) < len(r) and re.fullmatch(NUM, o) and num(o) == 0: r[u] = ""
tab["frames"] = [["rep", "sched", "name", "frame", "client_wake_us", "server_wake_us", "response_us", "frame_us", "met"]] + [
    [rep, s, re.sub("^name=", "", f[1])] + f[2:8] for rep, s, f in recs if f[0] == "frame"]
for t, rows in tab.items(): write(f"{csvd}/{t}.csv", "".join(",".join(r) + "\n" for r in rows))
# 2. Tables
def groups(t, keys, name):  # {key: {sched: [the non-empty values of column NAME]}}, keys in order
    rows = list(zip(keys, col(t, "sched"), col(t, name)))
    return {k: {s: [v for r in rows if r[:2] == (k, s) and (v := r[2])] for s in ("rsdl", "eevdf")} for k in dict.fromkeys(keys)}
# side WHAT TYPE KEYS METRICS: per (KEYS columns, metric) RSDL and EEVDF medians, spread (min-max), ratio of the medians
def side(what, t, keys, metrics):
    keyed = [" ".join(k) for k in zip(*(col(t, c) for c in keys.split()))]
    g, n = {m: groups(t, keyed, m) for m in metrics.split()}, {s: len({r for r, x in zip(col(t, "rep"), col(t, "sched")) if x == s}) for s in ("rsdl", "eevdf")}
    cell = lambda s, x: f"{fmt(med(x))}{f' ({len(x)} of {n[s]})' if len(x) < n[s] else ''} | {fmt(min(x, key=num))}–{fmt(max(x, key=num))}" if x else "– | –"
    ratio = lambda a, b: "–" if not (a and b) else "%.2f" % (num(med(a)) / num(med(b))) if num(med(b)) else "1.00" if num(med(a)) == 0 else "∞"
    return "\n".join([f"| {what} | figure | RSDL | RSDL min–max | EEVDF | EEVDF min–max | RSDL/EEVDF |", "|---" * 7 + "|"] + [
        f"| {k} | {m} | {cell('rsdl', v['rsdl'])} | {cell('eevdf', v['eevdf'])} | {ratio(v['rsdl'], v['eevdf'])} |"
        for k in dict.fromkeys(keyed) for m in metrics.split() if any((v := g[m][k]).values())])
# snag summary: frames met, server wake p99/max, response p99 and frame max per scenario (medians; ms)
snag = [groups("snag", col("snag", "name"), m) for m in ("frames_met_pct server_wake_p99_us server_wake_max_us response_p99_us frame_max_us".split())]
snag = ["| %s | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f |" % (k, *(
    num(med(g[k][s])) / (1000 if i else 1) for i, g in enumerate(snag) for s in ("rsdl", "eevdf"))) for k in snag[0]]
# 3. Plots (gnuplot). CDF data: sorted samples pooled over the repetitions.
term = "png size %s" if subprocess.run(["gnuplot", "-e", "set terminal pngcairo"], capture_output=True).returncode else "pngcairo size %s font ',10'"
def gnuplot(size, png, script): subprocess.run(["gnuplot"], input=f"set terminal {term % size}\nset output '{plots}/{png}'\n{script}\n", text=True, check=True)
data, frames = (tmp := tempfile.TemporaryDirectory()).name, tab["frames"][1:]
scenarios = [n for n in dict.fromkeys(r[2] for r in frames) if n]
for sc in scenarios:
    for s, c, what in ((s, c, w) for s in ("rsdl", "eevdf") for c, w in ((4, "client"), (5, "server"), (6, "response"), (7, "frame"))):
        v = sorted(num(r[c]) for r in frames if r[1] == s and r[2] == sc)
        write(f"{data}/{sc}-{s}-{what}", "".join(f"{pr(max(x, 1) / 1000)} {pr((i + 1) / len(v))}\n" for i, x in enumerate(v)))
    cdf = lambda w: ", ".join(f'"{data}/{sc}-{s}-{w}" using 1:2 with steps lw 2 title "{s.upper()}"' for s in ("rsdl", "eevdf"))
    gnuplot("1400,420", f"cdf-{sc}.png", f"""set multiplot layout 1,3 title "{sc}: latency CDFs, all frames of all repetitions"
set logscale x; set grid; set key bottom right; set xlabel "latency (ms, log scale)"; set ylabel "fraction of frames"; set yrange [0:1.02]
set title "client: timer expiry -> client running"; plot {cdf("client")}\nset title "server: request written -> server running"; plot {cdf("server")}
set title "server response: request written -> reply read"; plot {cdf("response")}\nunset multiplot""")
# frame time CDFs of all scenarios, one panel per scheduler
gnuplot("1000,420", "frame-time-cdf.png", """set multiplot layout 1,2 title 'frame time (tick -> client work done) CDF; 16.7 ms = one period'
set logscale x; set grid; set key bottom right font ',8'; set yrange [0:1.02]; set xlabel 'frame time (ms, log scale)'; set ylabel 'fraction of frames'
set arrow from 16.667, graph 0 to 16.667, graph 1 nohead dt 2\n""" + "".join(f"set title '{s.upper()}'\nplot " + ", ".join(
    f'"{data}/{sc}-{s}-frame" using 1:2 with steps lw 2 title "{sc}"' for sc in scenarios) + "\n" for s in ("rsdl", "eevdf")) + "unset multiplot")
# hog shares per nice (pinned hogs on one CPU): measured median and each table's expectation
nice = [k if n == "F1-pinned" else None for k, n in zip(col("share", "nice"), col("share", "name"))]
g, e = groups("share", nice, "share_pct"), {s: col("share", s + "_table_pct") for s in ("rsdl", "eevdf")}
write(f"{data}/shares", "".join(f"nice{k} " + " ".join(f"{pr(med(g[k][s]))} {e[s][i]}" for s in e) + "\n"
                                for k, i in {k: i for i, k in enumerate(nice) if k is not None}.items()))
hist = "set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8 border -1\n"
gnuplot("1000,420", "hog-shares-per-nice.png", f"""{hist}set logscale y; set yrange [0.1:100]; set grid y; set key top right
set title "CPU share of hogs pinned together on one CPU: measured (median) vs each scheduler's own table"
set ylabel "share of one CPU (%, log scale)"; plot "{data}/shares" using 2:xtic(1) title "RSDL measured", \\
"" using 3 title "RSDL expected (E = slots x quota)", "" using 4 title "EEVDF measured", "" using 5 title "EEVDF expected (weights)\"""")
g = groups("snag", col("snag", "name"), "frames_met_pct")  # frames met per scenario
write(f"{data}/frames", "".join(f"{k} {pr(med(v['rsdl']))} {pr(med(v['eevdf']))}\n" for k, v in g.items()))
gnuplot("1000,420", "frames-met.png", f"""{hist}set yrange [0:120]; set ytics 0,20,100; set key top center horizontal; set grid y
set title "snag workload: frames met (median over the repetitions)"; set ylabel "frames met (%)"; set xtics rotate by -20 font ",8"
plot "{data}/frames" using 2:xtic(1) title "RSDL", "" using 3 title "EEVDF\"""")
# 4. report.md, paragraphs
setup = dict(reversed([x.split("=", 1) for x in read(f"{out}/setup.txt").split("\n") if "=" in x]))  # the first of each key
S = lambda k: setup.get(k, "")
console = read(f"{raw}/rep1-rsdl/console.log")
version, cmdline = re.search(r"Linux version [^ \n]*", console), re.search(r".*Command line: (.*)", console)
last_line = lambda p: read(p).rstrip("\n").split("\n")[-1]
wall = lambda b: read(f"{raw}/{b}/wall-seconds").rstrip("\n") if os.path.exists(f"{raw}/{b}/wall-seconds") else "?"
clock = "- **clock**: guest CLOCK_MONOTONIC = host wall time (-accel tcg,thread=multi), noisy when the host is busy." \
    if S("accel") != "icount" else """- **clock**: every time in this report is guest CLOCK_MONOTONIC under `-accel tcg,thread=single -icount shift=4,sleep=off`:
  guest virtual time, advancing 16 ns per emulated instruction, independent of host load (not host wall time).\n""" + ("""\
  The vCPUs are emulated by one host thread, so a vCPU runs slower (in guest time) when the others
  are busy too; the same for both schedulers. The work unit (`calibrate`, once per boot) is measured
  with all vCPUs busy: "1 ms of work" = 1 ms of CPU time in the loaded state.""" if S("smp").strip().isdigit() and int(S("smp")) > 1
    else "  One vCPU: the work unit (`calibrate`, once per boot) is 1 ms of that vCPU's time.")
report = ["# make demo: RSDL versus EEVDF", f"""\
- date: {S('date')}, mode: {S('mode')}, {sum('rsdl' in b for b in boots)} repetition(s); each repetition boots the same image twice, RSDL then `rsdl=off` (EEVDF)
- command: `{S('command')}`
- kernel: `{S('kernel')}` (sha256 {S('kernel_sha256')[:16]}…), {version[0] if version else '?'}, repository commit {S('commit')}
- host: {S('host_cpus')} CPUs ({S('host_model')}), {S('qemu')}, shared with other jobs
- guest: QEMU TCG, -smp {S("smp")}, -m 2048M, accel {S('accel')}, kernel command line `{cmdline[1] if cmdline else ''}`
{clock}
- rr_interval (RSDL): {next((r for r, s in zip(col('snag', 'rr_ms'), col('snag', 'sched')) if s == 'rsdl'), '')} ms
- cells: median over the repetitions; min–max = spread over the repetitions; RSDL/EEVDF = ratio of the medians.
  Expected values (`*_entitled_pct`, `hog_fair_pct`, `expected_pct`) come from each scheduler's own table:
  RSDL from the spec formulas (guest/lib/rsdl_spec.h: E = usable slots × quota), EEVDF from sched_prio_to_weight.""", "Boots:",
    "\n".join(f"- `{b}`: {last_line(f'{raw}/{b}/verdict')}, {wall(b)} s wall, vCPU balance at start/end "
              + "/".join(re.findall(r"vcpu_balance=([0-9.]*)", ktap[b]))
              + (f", after {n} boot(s) given up for unbalanced vCPUs" if (n := len(glob.glob(glob.escape(f"{raw}/{b}") + ".try*"))) else "") for b in boots),
    "## 1. The snag workload", """\
Client every 16.7 ms (absolute timer) → request over a pipe → server burns S ms → reply → client burns 1 ms.
S: steady 2 ms; ramp (eye candy) 1→9 ms over 1 s; burst 1→2×rr_interval (12 ms) over 1 s, i.e. longer than one quantum.
Hogs: 2 × vCPUs busy loops at the nice in the scenario name; `srv-10` = server at nice −10 (the remedy).
Guest source: guest/bench/snag.c; scenario list: guest/lab/run/demo.""", "\n".join([
    "| scenario | frames met % RSDL | EEVDF | server wake p99 ms RSDL | EEVDF | server wake max ms RSDL | EEVDF | "
    "server response p99 ms RSDL | EEVDF | frame max ms RSDL | EEVDF |", "|---" * 11 + "|"] + snag),
    "![frames met](plots/frames-met.png)", "![frame time CDF](plots/frame-time-cdf.png)", """\
Reading the table: *server wake* is request written → server running; *server response* adds the server's
own work and every preemption until the reply is read, so it shows a burst cut into quanta. When the pair's demand
(`demanded_cpu_pct`) is above its entitlement (S2b, S4), missed frames are the fair outcome, not a failure.""",
    "Latency CDFs (client wake, server wake, server response) per scenario:",
    "\n".join(f"![{sc}](plots/cdf-{sc}.png)" for sc in scenarios), """\
All figures (µs unless the name says otherwise; `*_pct` = % of one CPU; demanded/delivered = calibrated work
the client+server pair asked for / got done per second; `pair_cpu_pct` = their CPU time by the kernel's accounting;
`hog_fair_pct` = (CPUs − pair CPU) / hogs; `hog_min1s_pct` = smallest share of any hog in any 1 s window):""",
    side("scenario", "snag", "name", "frames met frames_met_pct long_frames frame_p50_us frame_p99_us frame_max_us "
         "client_wake_p50_us client_wake_p99_us client_wake_max_us server_wake_p50_us server_wake_p99_us server_wake_max_us "
         "response_p50_us response_p99_us response_max_us demanded_cpu_pct delivered_cpu_pct pair_cpu_pct client_entitled_pct "
         "server_entitled_pct hog_share_mean_pct hog_fair_pct hog_jain hog_min1s_pct"),
    "## 2. Latency under load: cyclictest --policy=other",
    "`cyclictest -m -q --policy=other -i 1000 -t 1` at the nice in the name, beside 2 × vCPUs nice-0 hogs; µs.",
    side("run", "cyclictest", "name", "samples p50_us p99_us max_us overflows"),
    "## 3. Fairness: hog shares against each scheduler's table", """\
F1: one hog per nice, all pinned to CPU 1. F2: 2 × vCPUs nice-0 hogs, unpinned (expected: CPUs / hogs each).
Shares in % of one CPU; `min1s_pct`: smallest share of any hog in any 1 s window (starvation view);
`worst_vs_expected`: smallest ratio measured/expected over the hogs. Jain's index is meaningful for equal nice levels (F2).""",
    "![hog shares per nice](plots/hog-shares-per-nice.png)", side("run, nice", "share", "name nice hog", "share_pct expected_pct"),
    side("run", "shares", "name", "jain min1s_pct worst_vs_expected"), "## 4. Throughput and overhead",
    "hackbench and `perf bench sched messaging`: seconds (lower is better); `perf bench sched pipe`: µs per round trip.",
    side("benchmark", "bench", "name unit", "value"), """\
Pick cost: N threads that mostly sleep (each wakes once a second, burns 20 µs) or spin, beside a pipe
ping-pong between two processes. `pingpong_us`: µs per round trip; `ctxsw_per_s`: /proc/stat;
`spin_work_pct`: work the spinners got done, % of all CPUs (100 − it = scheduling + ping-pong + kernel cost);
`create_us_per_task`: pthread_create cost per thread, before the measurement.
Beside N spinners the ping-pong competes for CPU: under RSDL a task that has used its slots waits for the
rotation, up to Σ E(others) = N × 20 slots × rr_interval (spec: bounded wait), so with 100 or more spinners it
may get no round trip at all in the window (`pingpong_ops` = 0, no `pingpong_us`); under EEVDF it gets about 1/(N+2).""",
    side("run", "pickcost", "name", "pingpong_us pingpong_ops ctxsw_per_s spin_work_pct create_us_per_task"),
    "## 5. Calibration", side("boot", "calibrate", "cpus", "loops_per_ms loops_per_ms_alone vcpu_balance"),
    "Raw data: `csv/*.csv` (frames.csv: every frame of every run). Boot logs: `raw/rep<N>-<sched>/`."]
write(f"{out}/report.md", "\n\n".join(report) + "\n")
print(f"[report] wrote {out}/report.md, {len(os.listdir(csvd))} CSV files, {len(os.listdir(plots))} plots")
