#!/usr/bin/env bash
# make demo: build the benchmark ("perf") kernel, boot it and run the benchmarks of
# guest/lab/run/demo.list, then write a results directory with the raw output and report.md.
# For now EEVDF only (rsdl=off); the RSDL side-by-side comparison is pending.
#   KERNEL=bzImage  SMP=2  ACCEL=icount|multi (default icount)  RESULTS=dir
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=demo
S=$REPO/scripts
t_start=$(date +%s)
"$S/deps.sh"
if [ -z "${KERNEL:-}" ]; then
	"$S/prepare-tree.sh"
	"$S/build-kernel.sh" perf
	KERNEL=$RSDL_WORK/build-perf/arch/x86/boot/bzImage
fi
"$S/build-initramfs.sh"
out=${RESULTS:-$RSDL_WORK/results/$(date +%Y%m%d-%H%M%S)-demo}
# icount: the numbers repeat within a few percent (multi: 67..1254 us/op for the same pipe test
# on a busy host), at the price of vCPUs that share one host thread (README: ACCEL)
smp=${SMP:-2} accel=${ACCEL:-icount}
mkdir -p "$out"

# Schedulers to compare: name and kernel command line. RSDL joins here once it boots.
schedulers=("eevdf|rsdl=off")
for s in "${schedulers[@]}"; do
	name=${s%%|*} cmdline=${s#*|}
	"$S/run-qemu.sh" -k "$KERNEL" -n "demo-$name" -o "$out/$name" -s "$smp" -a "$accel" \
		-c "$cmdline lab.run=demo" -t "${BOOT_TIMEOUT:-1800}" || true
	"$S/ktap-verdict.sh" -n "demo-$name" "$out/$name/ktap.log" "$out/$name/console.log" \
		"$(cat "$out/$name/qemu-status")" >"$out/$name/verdict" || true
done

# numbers FILE: "test value" for hackbench's "Time: S" and perf bench's "N usecs/op"
numbers() {
	tr -d '\r' <"$1" | awk '/# Subtest: / { t = $NF }
		$1 == "Time:" { print t, $2 } $2 == "usecs/op" { print t, $1 }'
}
# row LABEL PREFIX FILE: a Markdown table row with the runs of PREFIX-* and their median
row() {
	local vals
	vals=$(numbers "$3" | awk -v p="$2-" 'index($1, p) == 1 { print $2 }')
	echo "$vals" | awk -v label="$1" 'NF { v[++n] = $1; s = s " | " $1 }
		END { if (n == 0) { print "| " label " | (no result) | | | |"; exit }
		      for (i = n; i < 3; i++) s = s " | –"
		      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			      if (v[j] + 0 < v[i] + 0) { x = v[i]; v[i] = v[j]; v[j] = x }
		      printf "| %s%s | **%s** |\n", label, s, v[int((n + 1) / 2)] }'
}

e=$out/eevdf
{
	echo "# make demo — EEVDF only — RSDL comparison pending"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(nproc) CPUs"
	echo "- kernel: $(tr -d '\r' <"$e/console.log" | grep -m1 -o 'Linux version [^ ]*' || echo '?') ($KERNEL)"
	if [ "$accel" = icount ]; then
		clock="guest virtual time, 16 ns per instruction, independent of host load"
	else
		clock="guest time = host wall time, noisy when the host is busy"
	fi
	echo "- guest: QEMU TCG, -smp $smp, -m 1024M, accel $accel ($clock)"
	echo "- cmdline: rsdl=off lab.run=demo (stock EEVDF)"
	echo "- boot verdict: $(tail -n 1 "$e/verdict")"
	echo
	echo "| benchmark (lower is better) | run 1 | run 2 | run 3 | median |"
	echo "|---|---|---|---|---|"
	row 'hackbench -g 4 -l 200 (s)' hackbench "$e/ktap.log"
	row 'perf bench sched pipe -l 100000 (µs/op)' pipe "$e/ktap.log"
	echo
	echo "Raw output: \`eevdf/ktap.log\` (benchmark output), \`eevdf/console.log\` (kernel log)."
} >"$out/report.md"
cat "$out/report.md"
echo
say "results in $out ($(since "$t_start"))"
grep -q ', 0 failed$' "$e/verdict" || { grep '^FAIL' "$e/verdict"; die "the demo boot was not clean"; }
