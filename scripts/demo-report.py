#!/usr/bin/env python3
"""demo-report.py RESULTS_DIR: turn the demo boots in RESULTS_DIR/raw/rep<N>-<column>/ into
CSV files (csv/), PNG plots (plots/, gnuplot) and report.md (prose: demo-report.md.in) with the
columns that booted (SCHEDS) side by side: median over the repetitions, spread (min-max), ratio
of the medians to EEVDF's. It stops, writing nothing, when a boot's guest contradicts its column.
Values stay the guest's text; they are compared and averaged as numbers (their leading number)."""
import glob
import os
import re
import string
import subprocess
import sys
import tempfile

# the columns in report order, as named in raw/rep<N>-<column>: label, the scheduler the guest's
# suite must report ("# scheduler: X"), whether its /proc/sys/kernel/rsdl_lend must be 1
SCHEDS = {"rsdl": ("RSDL", "rsdl", False), "eevdf": ("EEVDF", "eevdf", False),
          "rsdl-lend": ("RSDL + lending (rule 14)", "rsdl", True)}
BASE = "eevdf"  # the ratio columns: every other column's medians / this one's
TYPES = "mode calibrate snag share shares cyclictest bench pickcost".split()
FRAME_HEADER = "rep sched name frame client_wake_us server_wake_us response_us frame_us met"
NUMBER = r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"
# the snag summary: per group of columns (one per scheduler) the metric, its divisor (µs -> ms),
# format and header
SNAG_SUMMARY = [("frames_met_pct", 1, "%.1f", "frames met %"),
                ("server_wake_p99_us", 1000, "%.2f", "server wake p99 ms"),
                ("server_wake_max_us", 1000, "%.2f", "server wake max ms"),
                ("response_p99_us", 1000, "%.1f", "server response p99 ms"),
                ("frame_max_us", 1000, "%.1f", "frame max ms")]
# the side-by-side tables: placeholder in the template, record type, key columns, metrics
SIDE_TABLES = [
    ("snag_figures", "snag", "name", "frames met frames_met_pct long_frames frame_p50_us"
     " frame_p99_us frame_max_us client_wake_p50_us client_wake_p99_us client_wake_max_us"
     " server_wake_p50_us server_wake_p99_us server_wake_max_us response_p50_us response_p99_us"
     " response_max_us demanded_cpu_pct delivered_cpu_pct pair_cpu_pct client_entitled_pct"
     " server_entitled_pct hog_share_mean_pct hog_fair_pct hog_jain hog_min1s_pct"),
    ("cyclictest_figures", "cyclictest", "name", "samples p50_us p99_us max_us overflows"),
    ("share_figures", "share", "name nice hog", "share_pct expected_pct"),
    ("shares_figures", "shares", "name", "jain min1s_pct worst_vs_expected"),
    ("bench_figures", "bench", "name unit", "value"),
    ("pickcost_figures", "pickcost", "name",
     "pingpong_us pingpong_ops ctxsw_per_s spin_work_pct create_us_per_task"),
    ("calibrate_figures", "calibrate", "cpus", "loops_per_ms loops_per_ms_alone vcpu_balance"),
]
SETUP_KEYS = "date mode command kernel commit host_cpus host_model qemu smp accel".split()
CURVE = '"{}" using 1:2 with steps lw 2 title "{}"'  # a CDF in a gnuplot plot command: file, title
BARS = ("set style data histograms; set style histogram clustered gap 1\n"
        "set style fill solid 0.8 border -1")


def number(value):
    """A value as a number: its leading number, else 0; numbers stay as they are."""
    if not isinstance(value, str):
        return value
    match = re.match(r"\s*" + NUMBER, value)
    return float(match[0]) if match else 0.0


def median(values):
    """The middle value as written, or the mean of the two middle ones; 0 for none."""
    ordered = sorted(values, key=number)
    half = len(ordered) // 2
    if not ordered:
        return 0
    if len(ordered) % 2:
        return ordered[half]
    return (number(ordered[half - 1]) + number(ordered[half])) / 2


def as_awk(value):
    """A value as awk prints it: text as it is, integers as such, else 6 significant digits."""
    if isinstance(value, str):
        return value
    return "%d" % value if value == int(value) else "%.6g" % value


def cell(value):
    """A table cell: integers as such, 3 significant digits below 10, else one decimal."""
    value = number(value)
    if value == int(value):
        return "%d" % value
    return "%.3g" % value if -10 < value < 10 else "%.1f" % value


def read(path):
    """The text of a file without carriage returns; "" if there is no such file."""
    if not os.path.isfile(path):
        return ""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read().replace("\r", "")


def write(path, text):
    """Write TEXT to the file PATH."""
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)


def version_key(name):
    """Sort key of sort -V: runs of digits compare as numbers."""
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name)]


def column(table, name):
    """The values of column NAME of a (header, rows) table; "" where a row has none."""
    header, rows = table
    if name not in header:
        return [""] * len(rows)
    i = header.index(name)
    return [row[i] if i < len(row) else "" for row in rows]


def rep_sched(boot):
    """(rep, sched) of a boot directory rep<N>-<sched>."""
    return tuple(boot[3:].split("-", 1))


def label(sched):
    """The report's name of a column."""
    return SCHEDS[sched][0]


def records(raw, boots):
    """(rep, sched, fields) of each non-empty line of the boots' ktap.log; 8 empty fields added."""
    found = []
    for boot in boots:
        rep, sched = rep_sched(boot)
        for line in read(f"{raw}/{boot}/ktap.log").split("\n"):
            fields = line.split()
            if fields:
                found.append((rep, sched, fields + [""] * 8))
    return found


def record_table(found, kind):
    """The table of the "KIND key=value ..." records: rep, sched, then the first one's keys."""
    header, rows = [], []
    for rep, sched, fields in found:
        if fields[0] != kind or "=" not in fields[1]:
            continue
        pairs = [x.split("=", 1) for x in fields[1:] if x]
        pairs = [pair for pair in pairs if pair[0] != "sched"]
        if not header:
            header = ["rep", "sched"] + [pair[0] for pair in pairs]
        rows.append([rep, sched] + [pair[-1].replace(",", ";") for pair in pairs])
    return header, rows


def make_tables(raw, boots):
    """{type: (header, rows)} of the guest's records, "frames" the frame lines."""
    found = records(raw, boots)
    tables = {kind: record_table(found, kind) for kind in TYPES}
    # a ping-pong that got no round trip in the window has no time per round trip (not 0)
    header, rows = tables["pickcost"]
    if "pingpong_us" in header:
        us = header.index("pingpong_us")
        for row, ops in zip(rows, column(tables["pickcost"], "pingpong_ops")):
            if us < len(row) and re.fullmatch(NUMBER, ops) and number(ops) == 0:
                row[us] = ""
    frames = [[rep, sched, re.sub("^name=", "", f[1])] + f[2:8]
              for rep, sched, f in found if f[0] == "frame"]
    tables["frames"] = (FRAME_HEADER.split(), frames)
    return tables


def groups(table, keys, name):
    """{key: {sched: [the non-empty values of column NAME]}}, one key per row, keys in order."""
    result = {key: {sched: [] for sched in SCHEDS} for key in keys}
    for key, sched, value in zip(keys, column(table, "sched"), column(table, name)):
        if value and sched in SCHEDS:
            result[key][sched].append(value)
    return result


def lending(tables):
    """{(rep, sched): /proc/sys/kernel/rsdl_lend in the guest} of the boots that recorded it."""
    mode = tables["mode"]
    return dict(zip(zip(column(mode, "rep"), column(mode, "sched")), column(mode, "rsdl_lend")))


def check_columns(raw, boots, tables):
    """Stop when a boot's guest contradicts its column: the scheduler its suite reported, its
    rsdl_lend (a mislabelled column is worse than none). Boots without records add nothing."""
    lend, wrong = lending(tables), []
    recorded = {tuple(row[:2]) for _, rows in tables.values() for row in rows}
    for boot in boots:
        if rep_sched(boot) not in recorded:
            continue
        _, scheduler, lends = SCHEDS[rep_sched(boot)[1]]
        ran = re.search(r"^# scheduler: (\S+)", read(f"{raw}/{boot}/ktap.log"), re.M)
        if ran and ran[1] != scheduler:
            hint = " (a kernel without CONFIG_SCHED_RSDL?)" if scheduler == "rsdl" else ""
            wrong.append(f"{boot}: the guest ran {ran[1]}, not {scheduler}{hint}")
        value = lend.get(rep_sched(boot), "not recorded")
        if (value == "1") != lends:
            wrong.append(f"{boot}: /proc/sys/kernel/rsdl_lend in the guest: {value}, "
                         + ("not 1 (a kernel without lending?)" if lends else "lending on"))
    if wrong:
        sys.exit(f"[report] error: {raw}: boots that are not what their name says, no report:\n  "
                 + "\n  ".join(wrong))


def ratio_columns(scheds):
    """The columns that get a ratio to BASE: all others, if BASE is there."""
    return [s for s in scheds if s != BASE] if BASE in scheds else []


def spread(values, boots):
    """A column's two cells: median ("n of N" if only n of N boots have it) | min–max."""
    if not values:
        return "– | –"
    some = f" ({len(values)} of {boots})" if len(values) < boots else ""
    low, high = min(values, key=number), max(values, key=number)
    return f"{cell(median(values))}{some} | {cell(low)}–{cell(high)}"


def ratio(values, base):
    """A X/EEVDF cell: ratio of the medians; 1.00 for 0/0, ∞ for x/0, – if one is missing."""
    if not (values and base):
        return "–"
    a, b = number(median(values)), number(median(base))
    if b:
        return "%.2f" % (a / b)
    return "1.00" if a == 0 else "∞"


def side_table(table, keys, metrics, scheds):
    """A side-by-side table after its first two header cells: the rest of the header, the
    separator, a row per (KEYS columns, metric): per column median and spread, then ratios."""
    cells = [c for s in scheds for c in (label(s), label(s) + " min–max")]
    others = ratio_columns(scheds)
    cells += [f"{label(s)}/{label(BASE)}" for s in others]
    text = "".join(f" {c} |" for c in cells) + "\n|---|---|" + "---|" * len(cells)
    keyed = [" ".join(k) for k in zip(*(column(table, c) for c in keys.split()))]
    boots = set(zip(column(table, "rep"), column(table, "sched")))
    reps = {sched: sum(s == sched for _, s in boots) for sched in SCHEDS}
    by_metric = {m: groups(table, keyed, m) for m in metrics.split()}
    for key in dict.fromkeys(keyed):
        for m in metrics.split():
            values = by_metric[m][key]
            if any(values[s] for s in scheds):
                text += f"\n| {key} | {m} |"
                text += "".join(f" {spread(values[s], reps[s])} |" for s in scheds)
                text += "".join(f" {ratio(values[s], values[BASE])} |" for s in others)
    return text


def snag_summary(snag, scheds):
    """The SNAG_SUMMARY table after its first header cell: the rest of the header, the
    separator, a row per scenario."""
    cells = [f"{head} {label(s)}" if s == scheds[0] else label(s)
             for _, _, _, head in SNAG_SUMMARY for s in scheds]
    text = "".join(f" {c} |" for c in cells) + "\n|---|" + "---|" * len(cells)
    by_metric = [groups(snag, column(snag, "name"), m) for m, _, _, _ in SNAG_SUMMARY]
    for key in by_metric[0]:
        text += f"\n| {key} |"
        for (_, divisor, form, _), values in zip(SNAG_SUMMARY, by_metric):
            for sched in scheds:
                text += " " + form % (number(median(values[key][sched])) / divisor) + " |"
    return text


def gnuplot(terminal, png, script):
    """Run gnuplot SCRIPT with TERMINAL writing the file PNG."""
    script = f"set terminal {terminal}\nset output '{png}'\n{script}\n"
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def write_cdf(path, values):
    """Write the CDF of VALUES (µs, below 1 counted as 1) as "ms fraction" lines."""
    ordered = sorted(values)
    lines = [f"{as_awk(max(x, 1) / 1000)} {as_awk((i + 1) / len(ordered))}\n"
             for i, x in enumerate(ordered)]
    write(path, "".join(lines))


def bars(path, titles):
    """A gnuplot plot command of clustered bars: column 1 of PATH the xtics, then one per title."""
    more = "".join(f', "" using {i} title "{t}"' for i, t in enumerate(titles[1:], 3))
    return f'plot "{path}" using 2:xtic(1) title "{titles[0]}"{more}'


def plot_frames(frames, scenarios, scheds, plots, data, size):
    """Latency CDFs per scenario, frame time CDFs of all scenarios per scheduler."""
    columns = {4: "client", 5: "server", 6: "response", 7: "frame"}
    for sc in scenarios:
        for s in scheds:
            for i, what in columns.items():
                latencies = [number(r[i]) for r in frames if r[1] == s and r[2] == sc]
                write_cdf(f"{data}/{sc}-{s}-{what}", latencies)
        plot = {w: ", ".join(CURVE.format(f"{data}/{sc}-{s}-{w}", label(s)) for s in scheds)
                for w in columns.values()}
        gnuplot(size % "1400,420", f"{plots}/cdf-{sc}.png", f"""\
set multiplot layout 1,3 title "{sc}: latency CDFs, all frames of all repetitions"
set logscale x; set grid; set key bottom right; set yrange [0:1.02]
set xlabel "latency (ms, log scale)"; set ylabel "fraction of frames"
set title "client: timer expiry -> client running"; plot {plot["client"]}
set title "server: request written -> server running"; plot {plot["server"]}
set title "server response: request written -> reply read"; plot {plot["response"]}
unset multiplot""")
    panels = ""
    for s in scheds:
        plot = ", ".join(CURVE.format(f"{data}/{sc}-{s}-frame", sc) for sc in scenarios)
        panels += f"set title '{label(s)}'\nplot {plot}\n"
    gnuplot(size % f"{500 * len(scheds)},420", f"{plots}/frame-time-cdf.png", f"""\
set multiplot layout 1,{len(scheds)} title \
'frame time (tick -> client work done) CDF; 16.7 ms = one period'
set logscale x; set grid; set key bottom right font ',8'; set yrange [0:1.02]
set xlabel 'frame time (ms, log scale)'; set ylabel 'fraction of frames'
set arrow from 16.667, graph 0 to 16.667, graph 1 nohead dt 2
{panels}unset multiplot""")


def plot_bars(share, snag, scheds, plots, data, size):
    """Hog shares per nice (hogs pinned together, F1) and frames met per scenario: bar charts."""
    nices = [n if name == "F1-pinned" else None
             for n, name in zip(column(share, "nice"), column(share, "name"))]
    measured = groups(share, nices, "share_pct")
    expected = groups(share, nices, "expected_pct")  # the guest's table for its scheduler
    lines, titles = "", []
    for nice in (n for n in measured if n is not None):
        cells = [f"{as_awk(median(measured[nice][s]))} {as_awk(median(expected[nice][s]))}"
                 for s in scheds]
        lines += f"nice{nice} {' '.join(cells)}\n"
    for s in scheds:
        table = "weights" if SCHEDS[s][1] == "eevdf" else "E = slots x quota"
        titles += [f"{label(s)} measured", f"{label(s)} expected ({table})"]
    write(f"{data}/shares", lines)
    gnuplot(size % "1000,420", f"{plots}/hog-shares-per-nice.png", f"""\
{BARS}
set logscale y; set yrange [0.1:100]; set grid y; set key top right
set title "CPU share of hogs pinned together on one CPU: measured (median) vs each \
scheduler's own table"
set ylabel "share of one CPU (%, log scale)"
{bars(f"{data}/shares", titles)}""")
    lines = ""
    for key, met in groups(snag, column(snag, "name"), "frames_met_pct").items():
        lines += key + "".join(f" {as_awk(median(met[s]))}" for s in scheds) + "\n"
    write(f"{data}/frames", lines)
    gnuplot(size % "1000,420", f"{plots}/frames-met.png", f"""\
{BARS}
set yrange [0:120]; set ytics 0,20,100; set key top center horizontal
set grid y; set title "snag workload: frames met (median over the repetitions)"
set ylabel "frames met (%)"; set xtics rotate by -20 font ",8"
{bars(f"{data}/frames", [label(s) for s in scheds])}""")


def boot_line(raw, boot, lend):
    """The report's line on one boot: verdict, wall time, vCPU balance, rsdl_lend (LEND), boots
    given up."""
    path = f"{raw}/{boot}"
    verdict = read(f"{path}/verdict").rstrip("\n").split("\n")[-1]
    wall = "?"
    if os.path.exists(f"{path}/wall-seconds"):
        wall = read(f"{path}/wall-seconds").rstrip("\n")
    balance = "/".join(re.findall(r"vcpu_balance=([0-9.]*)", read(f"{path}/ktap.log")))
    line = f"- `{boot}`: {verdict}, {wall} s wall"
    if balance:
        line += f", vCPU balance at start/end {balance}"
    line += f", rsdl_lend {lend}"
    tries = len(glob.glob(glob.escape(path) + ".try*"))
    if tries:
        line += f", after {tries} boot(s) given up for unbalanced vCPUs"
    return line


def template_parts():
    """The parts of demo-report.md.in: {name: text} of the "@@ NAME" lines and what follows."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo-report.md.in")
    with open(path, encoding="utf-8") as f:
        pieces = re.split(r"^@@ (\S+)\n", f.read(), flags=re.M)
    return {name: part.rstrip("\n") for name, part in zip(pieces[1::2], pieces[2::2])}


def find_boots(raw, scheds):
    """The boot directories rep<N>-<column> in RAW of the columns SCHEDS, in sort -V order."""
    return sorted((os.path.basename(p) for s in scheds
                   for p in glob.glob(f"{glob.escape(raw)}/rep*-{s}")), key=version_key)


def smp_boots(out, scheds):
    """(boots, tables) of the throughput boots at DEMO_SMP vCPUs in raw-smp/, checked like the
    others; ([], None) when make demo ran none."""
    raw = f"{out}/raw-smp"
    boots = find_boots(raw, scheds)
    if not boots:
        return [], None
    tables = make_tables(raw, boots)
    check_columns(raw, boots, tables)
    return boots, tables


def smp_throughput(out, smp_runs, scheds, parts):
    """The report's throughput part at DEMO_SMP vCPUs (SMP_RUNS: smp_boots()), or the template's
    "smp-none"."""
    boots, tables = smp_runs
    if not boots:
        return parts["smp-none"]
    raw, lend = f"{out}/raw-smp", lending(tables)
    cpus = sorted(set(re.findall(r"^# scheduler: \S+ cpus: (\d+)",
                                 "".join(read(f"{raw}/{b}/ktap.log") for b in boots), re.M)))
    return string.Template(parts["smp"]).substitute(
        cpus="/".join(cpus) or "?",
        boots="\n".join(boot_line(raw, boot, lend.get(rep_sched(boot), "not recorded"))
                        for boot in boots),
        bench_smp_figures=side_table(tables["bench"], "name unit", "value", scheds))


def report(out, boots, tables, scenarios, scheds, smp_runs):
    """The text of report.md: the template part "report" filled in."""
    raw, snag, parts, lend = f"{out}/raw", tables["snag"], template_parts(), lending(tables)
    setup = {}
    for line in read(f"{out}/setup.txt").split("\n"):
        if "=" in line:
            setup.setdefault(*line.split("=", 1))  # the first line of each key
    values = {key: setup.get(key, "") for key in SETUP_KEYS}
    first = {}  # the first boot of each column
    for boot in boots:
        first.setdefault(rep_sched(boot)[1], boot)
    version = re.search(r"Linux version [^ \n]*", read(f"{raw}/{first[scheds[0]]}/console.log"))
    columns = ""
    for s in scheds:
        cmdline = re.search(r".*Command line: (.*)", read(f"{raw}/{first[s]}/console.log"))
        columns += f"\n  - {label(s)}: kernel command line `{cmdline[1] if cmdline else '?'}`"
    rr_ms = [r for r, s in zip(column(snag, "rr_ms"), column(snag, "sched"))
             if SCHEDS[s][1] == "rsdl"]
    clock = "clock-wall"
    if values["accel"] == "icount":
        smp = values["smp"].strip()
        clock = "clock-icount-smp" if smp.isdigit() and int(smp) > 1 else "clock-icount-1"
    values.update(title=" versus ".join(label(s) for s in scheds), columns=columns,
                  repetitions=len({rep_sched(boot)[0] for boot in boots}),
                  kernel_sha256=setup.get("kernel_sha256", "")[:16],
                  version=version[0] if version else "?",
                  clock=parts[clock], rr_ms=rr_ms[0] if rr_ms else "",
                  boots="\n".join(boot_line(raw, boot, lend.get(rep_sched(boot), "not recorded"))
                                   for boot in boots),
                  snag_summary=snag_summary(snag, scheds),
                  cdf_plots="\n".join(f"![{sc}](plots/cdf-{sc}.png)" for sc in scenarios),
                  smp_throughput=smp_throughput(out, smp_runs, scheds, parts))
    for name, kind, keys, metrics in SIDE_TABLES:
        values[name] = side_table(tables[kind], keys, metrics, scheds)
    return string.Template(parts["report"]).substitute(values) + "\n"


def main():
    """Write csv/, plots/ and report.md into the results directory given as the argument."""
    if len(sys.argv) != 2:
        sys.exit("usage: demo-report.py RESULTS_DIR")
    out = sys.argv[1]
    raw, csv, plots = f"{out}/raw", f"{out}/csv", f"{out}/plots"
    scheds = [s for s in SCHEDS if find_boots(raw, [s])]
    boots = find_boots(raw, scheds)
    if not boots:
        sys.exit(f"[report] error: no boots in {raw}")
    tables = make_tables(raw, boots)
    check_columns(raw, boots, tables)
    smp_runs = smp_boots(out, scheds)
    os.makedirs(csv, exist_ok=True)
    os.makedirs(plots, exist_ok=True)
    csvs = list(tables.items())
    if smp_runs[1]:
        csvs.append(("bench_smp", smp_runs[1]["bench"]))
    for kind, (header, rows) in csvs:
        lines = [header] + rows if header else rows
        write(f"{csv}/{kind}.csv", "".join(",".join(line) + "\n" for line in lines))
    cairo = subprocess.run(["gnuplot", "-e", "set terminal pngcairo"], capture_output=True)
    size = "png size %s" if cairo.returncode else "pngcairo size %s font ',10'"
    frames = tables["frames"][1]
    scenarios = [name for name in dict.fromkeys(row[2] for row in frames) if name]
    with tempfile.TemporaryDirectory() as data:
        plot_frames(frames, scenarios, scheds, plots, data, size)
        plot_bars(tables["share"], tables["snag"], scheds, plots, data, size)
    write(f"{out}/report.md", report(out, boots, tables, scenarios, scheds, smp_runs))
    print(f"[report] wrote {out}/report.md, {len(os.listdir(csv))} CSV files, "
          f"{len(os.listdir(plots))} plots")


if __name__ == "__main__":
    main()
