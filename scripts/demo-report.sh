#!/usr/bin/env bash
# demo-report.sh RESULTS_DIR: turn the demo boots in RESULTS_DIR/raw/rep<N>-<rsdl|eevdf>/ into
# CSV files (csv/), PNG plots (plots/, gnuplot) and report.md with RSDL and EEVDF side by side:
# median over the repetitions, spread (min-max), and the ratio of the medians RSDL/EEVDF.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=report
out=${1:?usage: demo-report.sh RESULTS_DIR}
csv=$out/csv plots=$out/plots
mkdir -p "$csv" "$plots"
boots=$(cd "$out/raw" && ls -d rep*-rsdl rep*-eevdf 2>/dev/null | sort -V)
[ -n "$boots" ] || die "no boots in $out/raw"

# 1. CSV: one file per record type ("TYPE key=value ..." lines of the guest), rep and sched first
for type in calibrate snag share shares cyclictest bench pickcost; do
	for b in $boots; do
		rep=${b%%-*} rep=${rep#rep} sched=${b#*-}
		tr -d '\r' <"$out/raw/$b/ktap.log" | awk -v rep="$rep" -v sched="$sched" -v type="$type" '
			{ sub(/^[ \t]+/, "") }
			$1 == type && $2 ~ /=/ {
				hdr = "rep,sched"; row = rep "," sched
				for (i = 2; i <= NF; i++) {
					k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v)
					if (k == "sched") continue
					gsub(/,/, ";", v)
					hdr = hdr "," k; row = row "," v
				}
				print hdr "\t" row
			}'
	done | awk -F'\t' 'NR == 1 { print $1 } { print $2 }' >"$csv/$type.csv"
done
# a ping-pong that got no round trip in the window has no time per round trip (not 0)
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR > 1 && $c["pingpong_ops"] == 0 { $c["pingpong_us"] = "" } 1' \
	"$csv/pickcost.csv" >"$csv/pickcost.tmp" && mv "$csv/pickcost.tmp" "$csv/pickcost.csv"
for b in $boots; do
	rep=${b%%-*} rep=${rep#rep} sched=${b#*-}
	tr -d '\r' <"$out/raw/$b/ktap.log" | awk -v rep="$rep" -v sched="$sched" '
		{ sub(/^[ \t]+/, "") }
		$1 == "frame" { n = $2; sub(/^name=/, "", n); print rep "," sched "," n "," $3 "," $4 "," $5 "," $6 "," $7 "," $8 }'
done | { echo "rep,sched,name,frame,client_wake_us,server_wake_us,response_us,frame_us,met"; cat; } >"$csv/frames.csv"

# 2. Tables. side CSV KEYS METRICS: one row per (key, metric): RSDL and EEVDF medians over the
# repetitions, their spread (min-max) and the ratio of the medians. KEYS: columns naming a row.
side() {
	awk -F, -v keys="$2" -v metrics="$3" '
	function med(s,   a, n, i, j, x) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { x = a[i]; a[i] = a[j]; a[j] = x }
		lo = a[1]; hi = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	# "(n of N)" when only n of the N repetitions have a value
	function of(k, m, s,   r, x, n) { n = 0; for (x in reps) { split(x, r, SUBSEP); if (r[1] == s) n++ }
		return cnt[k, m, s] < n ? sprintf(" (%d of %d)", cnt[k, m, s], n) : "" }
	function fmt(x) { return (x == int(x)) ? sprintf("%d", x) : (x < 10 && x > -10 ? sprintf("%.3g", x) : sprintf("%.1f", x)) }
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; nk = split(keys, K, " "); nm = split(metrics, M, " "); next }
	{
		k = ""
		for (i = 1; i <= nk; i++) k = k (i > 1 ? " " : "") $col[K[i]]
		if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		reps[$2, $1] = 1
		for (i = 1; i <= nm; i++) if ((M[i] in col) && $col[M[i]] != "") { v[k, M[i], $2] = v[k, M[i], $2] " " $col[M[i]]; cnt[k, M[i], $2]++ }
	}
	END {
		for (r = 1; r <= n; r++) for (i = 1; i <= nm; i++) {
			k = order[r]; m = M[i]
			if (!((k, m, "rsdl") in v) && !((k, m, "eevdf") in v)) continue
			rs = "–"; es = "–"; rr = "–"; er = "–"; ratio = "–"
			if ((k, m, "rsdl") in v) { a = med(v[k, m, "rsdl"]); rs = fmt(a) of(k, m, "rsdl"); rr = fmt(lo) "–" fmt(hi) }
			if ((k, m, "eevdf") in v) { b = med(v[k, m, "eevdf"]); es = fmt(b) of(k, m, "eevdf"); er = fmt(lo) "–" fmt(hi) }
			if (rs != "–" && es != "–") ratio = (b != 0) ? sprintf("%.2f", a / b) : (a == 0 ? "1.00" : "∞")
			printf "| %s | %s | %s | %s | %s | %s | %s |\n", k, m, rs, rr, es, er, ratio
		}
	}' "$1"
}
side_header() {
	echo "| $1 | figure | RSDL | RSDL min–max | EEVDF | EEVDF min–max | RSDL/EEVDF |"
	echo "|---|---|---|---|---|---|---|"
}
# snag_summary: frames met and server wake p99/max per scenario, medians
snag_summary() {
	awk -F, '
	function med(s,   a, n, i, j, x) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { x = a[i]; a[i] = a[j]; a[j] = x }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		k = $col["name"]; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		split("frames_met_pct server_wake_p99_us server_wake_max_us response_p99_us frame_max_us", F, " ")
		for (m = 1; m <= 5; m++) v[k, F[m], $2] = v[k, F[m], $2] " " $col[F[m]]
	}
	END {
		for (r = 1; r <= n; r++) { k = order[r]
			printf "| %s | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f |\n", k,
				med(v[k, "frames_met_pct", "rsdl"]), med(v[k, "frames_met_pct", "eevdf"]),
				med(v[k, "server_wake_p99_us", "rsdl"]) / 1000, med(v[k, "server_wake_p99_us", "eevdf"]) / 1000,
				med(v[k, "server_wake_max_us", "rsdl"]) / 1000, med(v[k, "server_wake_max_us", "eevdf"]) / 1000,
				med(v[k, "response_p99_us", "rsdl"]) / 1000, med(v[k, "response_p99_us", "eevdf"]) / 1000,
				med(v[k, "frame_max_us", "rsdl"]) / 1000, med(v[k, "frame_max_us", "eevdf"]) / 1000
		}
	}' "$csv/snag.csv"
}

# 3. Plots (gnuplot). CDF data: sorted samples pooled over the repetitions.
term="pngcairo size 1000,420 font ',10'" term3="pngcairo size 1400,420 font ',10'"
gnuplot -e 'set terminal pngcairo' 2>/dev/null || { term="png size 1000,420"; term3="png size 1400,420"; }
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
scenarios=$(awk -F, 'NR > 1 && !s[$3]++ { print $3 }' "$csv/frames.csv")
for sc in $scenarios; do
	for s in rsdl eevdf; do
		for c in 5:client 6:server 7:response 8:frame; do
			awk -F, -v s=$s -v n="$sc" -v c="${c%%:*}" '$2 == s && $3 == n { print $c }' "$csv/frames.csv" |
				sort -g | awk '{ v[NR] = $1 } END { for (i = 1; i <= NR; i++) print (v[i] < 1 ? 1 : v[i]) / 1000, i / NR }' \
				>"$data/$sc-$s-${c#*:}"
		done
	done
	gnuplot <<-EOF
	set terminal $term3
	set output "$plots/cdf-$sc.png"
	set multiplot layout 1,3 title "$sc: latency CDFs, all frames of all repetitions"
	set logscale x
	set grid
	set key bottom right
	set xlabel "latency (ms, log scale)"
	set ylabel "fraction of frames"
	set yrange [0:1.02]
	set title "client: timer expiry -> client running"
	plot "$data/$sc-rsdl-client" using 1:2 with steps lw 2 title "RSDL", \
	     "$data/$sc-eevdf-client" using 1:2 with steps lw 2 title "EEVDF"
	set title "server: request written -> server running"
	plot "$data/$sc-rsdl-server" using 1:2 with steps lw 2 title "RSDL", \
	     "$data/$sc-eevdf-server" using 1:2 with steps lw 2 title "EEVDF"
	set title "server response: request written -> reply read"
	plot "$data/$sc-rsdl-response" using 1:2 with steps lw 2 title "RSDL", \
	     "$data/$sc-eevdf-response" using 1:2 with steps lw 2 title "EEVDF"
	unset multiplot
	EOF
done
# frame time CDFs of all scenarios, one panel per scheduler
{
	echo "set terminal $term"
	echo "set output '$plots/frame-time-cdf.png'"
	echo "set multiplot layout 1,2 title 'frame time (tick -> client work done) CDF; 16.7 ms = one period'"
	echo "set logscale x; set grid; set key bottom right font ',8'; set yrange [0:1.02]"
	echo "set xlabel 'frame time (ms, log scale)'; set ylabel 'fraction of frames'"
	echo "set arrow from 16.667, graph 0 to 16.667, graph 1 nohead dt 2"
	for s in rsdl eevdf; do
		echo "set title '$([ $s = rsdl ] && echo RSDL || echo EEVDF)'"
		printf 'plot '
		sep=
		for sc in $scenarios; do
			printf '%s"%s" using 1:2 with steps lw 2 title "%s"' "$sep" "$data/$sc-$s-frame" "$sc"
			sep=', '
		done
		echo
	done
	echo "unset multiplot"
} | gnuplot
# hog shares per nice (pinned hogs on one CPU): measured median and each table's expectation
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["name"] == "F1-pinned" { k = $c["nice"]; if (!(k in s)) o[++n] = k; s[k] = 1
		v[k, $2] = v[k, $2] " " $c["share_pct"]; er[k] = $c["rsdl_table_pct"]; ee[k] = $c["eevdf_table_pct"] }
	function med(x,   a, m, i, j, t) { m = split(x, a, " ")
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return m ? (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) : 0 }
	END { for (i = 1; i <= n; i++) { k = o[i]; print "nice" k, med(v[k, "rsdl"]), er[k], med(v[k, "eevdf"]), ee[k] } }' \
	"$csv/share.csv" >"$data/shares"
gnuplot <<-EOF
set terminal $term
set output "$plots/hog-shares-per-nice.png"
set title "CPU share of hogs pinned together on one CPU: measured (median) vs each scheduler's own table"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.1:100]
set grid y
set ylabel "share of one CPU (%, log scale)"
set key top right
plot "$data/shares" using 2:xtic(1) title "RSDL measured", "" using 3 title "RSDL expected (E = slots x quota)", \
     "" using 4 title "EEVDF measured", "" using 5 title "EEVDF expected (weights)"
EOF
# frames met per scenario
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ k = $c["name"]; if (!(k in s)) o[++n] = k; s[k] = 1; v[k, $2] = v[k, $2] " " $c["frames_met_pct"] }
	function med(x,   a, m, i, j, t) { m = split(x, a, " ")
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return m ? (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) : 0 }
	END { for (i = 1; i <= n; i++) print o[i], med(v[o[i], "rsdl"]), med(v[o[i], "eevdf"]) }' \
	"$csv/snag.csv" >"$data/frames"
gnuplot <<-EOF
set terminal $term
set output "$plots/frames-met.png"
set title "snag workload: frames met (median over the repetitions)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:120]
set ytics 0,20,100
set key top center horizontal
set grid y
set ylabel "frames met (%)"
set xtics rotate by -20 font ",8"
plot "$data/frames" using 2:xtic(1) title "RSDL", "" using 3 title "EEVDF"
EOF

# 4. report.md
setup() { sed -n "s/^$1=//p" "$out/setup.txt" | head -n 1; }
nreps=$(echo "$boots" | grep -c rsdl)
accel=$(setup accel) smp=$(setup smp)
{
	echo "# make demo: RSDL versus EEVDF"
	echo
	echo "- date: $(setup date), mode: $(setup mode), $nreps repetition(s); each repetition boots the same image twice, RSDL then \`rsdl=off\` (EEVDF)"
	echo "- command: \`$(setup command)\`"
	echo "- kernel: \`$(setup kernel)\` (sha256 $(setup kernel_sha256 | cut -c1-16)…), $(tr -d '\r' <"$out/raw/rep1-rsdl/console.log" | grep -m1 -o 'Linux version [^ ]*' || echo '?'), repository commit $(setup commit)"
	echo "- host: $(setup host_cpus) CPUs ($(setup host_model)), $(setup qemu), shared with other jobs"
	echo "- guest: QEMU TCG, -smp $smp, -m 2048M, accel $accel, kernel command line \`$(tr -d '\r' <"$out/raw/rep1-rsdl/console.log" | sed -n 's/.*Command line: //p' | head -n 1)\`"
	if [ "$accel" = icount ]; then
		echo "- **clock**: every time in this report is guest CLOCK_MONOTONIC under \`-accel tcg,thread=single -icount shift=4,sleep=off\`:"
		echo "  guest virtual time, advancing 16 ns per emulated instruction, independent of host load (not host wall time)."
		if [ "$smp" -gt 1 ]; then
			echo "  The vCPUs are emulated by one host thread, so a vCPU runs slower (in guest time) when the others"
			echo "  are busy too; the same for both schedulers. The work unit (\`calibrate\`, once per boot) is measured"
			echo "  with all vCPUs busy: \"1 ms of work\" = 1 ms of CPU time in the loaded state."
		else
			echo "  One vCPU: the work unit (\`calibrate\`, once per boot) is 1 ms of that vCPU's time."
		fi
	else
		echo "- **clock**: guest CLOCK_MONOTONIC = host wall time (-accel tcg,thread=multi), noisy when the host is busy."
	fi
	echo "- rr_interval (RSDL): $(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $2 == "rsdl" { print $c["rr_ms"]; exit }' "$csv/snag.csv") ms"
	echo "- cells: median over the repetitions; min–max = spread over the repetitions; RSDL/EEVDF = ratio of the medians."
	echo "  Expected values (\`*_entitled_pct\`, \`hog_fair_pct\`, \`expected_pct\`) come from each scheduler's own table:"
	echo "  RSDL from the spec formulas (guest/lib/rsdl_spec.h: E = usable slots × quota), EEVDF from sched_prio_to_weight."
	echo
	echo "Boots:"
	echo
	for b in $boots; do
		echo "- \`$b\`: $(tail -n 1 "$out/raw/$b/verdict"), $(cat "$out/raw/$b/wall-seconds" 2>/dev/null || echo '?') s wall, vCPU balance at start/end $(tr -d '\r' <"$out/raw/$b/ktap.log" | grep -o 'vcpu_balance=[0-9.]*' | cut -d= -f2 | paste -sd/)$(ls -d "$out/raw/$b".try* >/dev/null 2>&1 && echo ", after $(ls -d "$out/raw/$b".try* | wc -l) boot(s) given up for unbalanced vCPUs")"
	done
	echo
	echo "## 1. The snag workload"
	echo
	echo "Client every 16.7 ms (absolute timer) → request over a pipe → server burns S ms → reply → client burns 1 ms."
	echo "S: steady 2 ms; ramp (eye candy) 1→9 ms over 1 s; burst 1→2×rr_interval (12 ms) over 1 s, i.e. longer than one quantum."
	echo "Hogs: 2 × vCPUs busy loops at the nice in the scenario name; \`srv-10\` = server at nice −10 (the remedy)."
	echo "Guest source: guest/bench/snag.c; scenario list: guest/lab/run/demo."
	echo
	echo "| scenario | frames met % RSDL | EEVDF | server wake p99 ms RSDL | EEVDF | server wake max ms RSDL | EEVDF | server response p99 ms RSDL | EEVDF | frame max ms RSDL | EEVDF |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	snag_summary
	echo
	echo "![frames met](plots/frames-met.png)"
	echo
	echo "![frame time CDF](plots/frame-time-cdf.png)"
	echo
	echo "Reading the table: *server wake* is request written → server running; *server response* adds the server's"
	echo "own work and every preemption until the reply is read, so it shows a burst cut into quanta. When the pair's demand"
	echo "(\`demanded_cpu_pct\`) is above its entitlement (S2b, S4), missed frames are the fair outcome, not a failure."
	echo
	echo "Latency CDFs (client wake, server wake, server response) per scenario:"
	echo
	for sc in $scenarios; do echo "![$sc](plots/cdf-$sc.png)"; done
	echo
	echo "All figures (µs unless the name says otherwise; \`*_pct\` = % of one CPU; demanded/delivered = calibrated work"
	echo "the client+server pair asked for / got done per second; \`pair_cpu_pct\` = their CPU time by the kernel's accounting;"
	echo "\`hog_fair_pct\` = (CPUs − pair CPU) / hogs; \`hog_min1s_pct\` = smallest share of any hog in any 1 s window):"
	echo
	side_header scenario
	side "$csv/snag.csv" name "frames met frames_met_pct long_frames frame_p50_us frame_p99_us frame_max_us client_wake_p50_us client_wake_p99_us client_wake_max_us server_wake_p50_us server_wake_p99_us server_wake_max_us response_p50_us response_p99_us response_max_us demanded_cpu_pct delivered_cpu_pct pair_cpu_pct client_entitled_pct server_entitled_pct hog_share_mean_pct hog_fair_pct hog_jain hog_min1s_pct"
	echo
	echo "## 2. Latency under load: cyclictest --policy=other"
	echo
	echo "\`cyclictest -m -q --policy=other -i 1000 -t 1\` at the nice in the name, beside 2 × vCPUs nice-0 hogs; µs."
	echo
	side_header run
	side "$csv/cyclictest.csv" name "samples p50_us p99_us max_us overflows"
	echo
	echo "## 3. Fairness: hog shares against each scheduler's table"
	echo
	echo "F1: one hog per nice, all pinned to CPU 1. F2: 2 × vCPUs nice-0 hogs, unpinned (expected: CPUs / hogs each)."
	echo "Shares in % of one CPU; \`min1s_pct\`: smallest share of any hog in any 1 s window (starvation view);"
	echo "\`worst_vs_expected\`: smallest ratio measured/expected over the hogs. Jain's index is meaningful for equal nice levels (F2)."
	echo
	echo "![hog shares per nice](plots/hog-shares-per-nice.png)"
	echo
	side_header "run, nice"
	side "$csv/share.csv" "name nice hog" "share_pct expected_pct"
	echo
	side_header run
	side "$csv/shares.csv" name "jain min1s_pct worst_vs_expected"
	echo
	echo "## 4. Throughput and overhead"
	echo
	echo "hackbench and \`perf bench sched messaging\`: seconds (lower is better); \`perf bench sched pipe\`: µs per round trip."
	echo
	side_header benchmark
	side "$csv/bench.csv" "name unit" "value"
	echo
	echo "Pick cost: N threads that mostly sleep (each wakes once a second, burns 20 µs) or spin, beside a pipe"
	echo "ping-pong between two processes. \`pingpong_us\`: µs per round trip; \`ctxsw_per_s\`: /proc/stat;"
	echo "\`spin_work_pct\`: work the spinners got done, % of all CPUs (100 − it = scheduling + ping-pong + kernel cost);"
	echo "\`create_us_per_task\`: pthread_create cost per thread, before the measurement."
	echo "Beside N spinners the ping-pong competes for CPU: under RSDL a task that has used its slots waits for the"
	echo "rotation, up to Σ E(others) = N × 20 slots × rr_interval (spec: bounded wait), so with 100 or more spinners it"
	echo "may get no round trip at all in the window (\`pingpong_ops\` = 0, no \`pingpong_us\`); under EEVDF it gets about 1/(N+2)."
	echo
	side_header "run"
	side "$csv/pickcost.csv" name "pingpong_us pingpong_ops ctxsw_per_s spin_work_pct create_us_per_task"
	echo
	echo "## 5. Calibration"
	echo
	side_header boot
	side "$csv/calibrate.csv" cpus "loops_per_ms loops_per_ms_alone vcpu_balance"
	echo
	echo "Raw data: \`csv/*.csv\` (frames.csv: every frame of every run). Boot logs: \`raw/rep<N>-<sched>/\`."
} >"$out/report.md"
say "wrote $out/report.md, $(ls "$csv" | wc -l) CSV files, $(ls "$plots" | wc -l) plots"
