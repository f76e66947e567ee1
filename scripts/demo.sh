#!/usr/bin/env bash
# make demo: RSDL versus EEVDF (and RSDL with lending) on the same benchmark ("perf") kernel
# image. Each repetition boots it once per column, interleaved: rsdl (default), eevdf (rsdl=off)
# and rsdl-lend (rsdl_lend: RSDL with rule 14 lending on), and runs guest/lab/run/demo (snag
# workload, cyclictest, fairness, throughput, pick cost); then scripts/demo-report.py writes
# report.md, CSV files and PNG plots into the results directory.
#   QUICK=1 (1 repetition, short runs)  REPS=3  KERNEL=bzImage  SMP=1
#   ACCEL=icount|multi (default icount)  RESULTS=dir  BOOT_TIMEOUT=1800
#   DEMO_SCHEDS="rsdl eevdf rsdl-lend" (the columns, in boot order; "rsdl eevdf": the two of old)
#   DEMO_SMP=4: then, per repetition and column, a boot with that many vCPUs under multi-threaded
#   TCG (host clock) runs guest/lab/run/demo-smp (hackbench, messaging) into raw-smp/; 0: none
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=demo
S=$REPO/scripts
t_start=$(date +%s)
# the command as given, for the report
cmd="make demo"
for v in RSDL_WORK KERNEL QUICK REPS SMP ACCEL DEMO_SCHEDS DEMO_SMP; do
	[ -z "${!v:-}" ] || cmd="$v=$(printf %q "${!v}") $cmd"
done
# the kernel command line of each column; its boots go to raw/rep<N>-<column>
declare -A sched_args=([rsdl]="" [eevdf]=rsdl=off [rsdl-lend]=rsdl_lend)
read -ra scheds <<<"${DEMO_SCHEDS:-rsdl eevdf rsdl-lend}"
[ ${#scheds[@]} -gt 0 ] || die "DEMO_SCHEDS is empty"
for s in "${scheds[@]}"; do
	[ -n "${sched_args[$s]+set}" ] || die "DEMO_SCHEDS: no column '$s' (${!sched_args[*]})"
	[ "$(printf '%s\n' "${scheds[@]}" | grep -cx -- "$s")" = 1 ] || die "DEMO_SCHEDS: '$s' twice"
done
lab_chain perf
quick=${QUICK:-0}
if [ "$quick" = 1 ]; then reps=${REPS:-1} extra="lab.quick=1" per_boot=90; else reps=${REPS:-3} extra= per_boot=160; fi
out=${RESULTS:-$RSDL_WORK/results/$(date +%Y%m%d-%H%M%S)-demo$([ "$quick" = 1 ] && echo -quick || true)}
# icount: guest time follows the instruction count, so the numbers do not depend on host load
# (docs/lab.md: ACCEL); both vCPUs then share one host thread, the same for every column.
# 1 vCPU by default: with 2 vCPUs under -icount one vCPU ran 7-13 times slower than the other,
# or not at all, in every boot tried (docs/lab.md, Known lab problems).
smp=${SMP:-1} accel=${ACCEL:-icount}
per_boot=$((per_boot * smp)) # -icount emulates the vCPUs on one host thread
demo_smp=${DEMO_SMP:-4}
[[ $demo_smp =~ ^[0-9]+$ ]] || die "DEMO_SMP: a number of vCPUs, or 0 (got '$demo_smp')"
mkdir -p "$out/raw"
boots=$((${#scheds[@]} * reps))
say "$boots boots ($reps x ${scheds[*]}, interleaved), $([ "$quick" = 1 ] && echo quick || echo full) mode," \
	"about $((boots * per_boot / 60)) min on an idle 2-core host (more when it is busy)," \
	"then $([ "$demo_smp" = 0 ] && echo "no" || echo "$boots") throughput boot(s) at $demo_smp vCPUs; results in $out"
{
	echo "command=$cmd"
	echo "kernel=$KERNEL"
	echo "kernel_sha256=$(sha256sum "$KERNEL" | cut -d' ' -f1)"
	echo "mode=$([ "$quick" = 1 ] && echo quick || echo full)"
	echo "reps=$reps"
	echo "smp=$smp"
	echo "accel=$accel"
	echo "demo_smp=$demo_smp"
	echo "host_cpus=$(nproc)"
	echo "host_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "qemu=$(qemu-system-x86_64 --version | head -n 1)"
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
} >"$out/setup.txt"

# run_boot DIR NAME SMP ACCEL CMDLINE: boot the image once into DIR (QEMU's output appended to
# DIR/../boots.log), judge it into DIR/verdict; returns run-qemu.sh's status.
run_boot() {
	local rc=0
	"$S/run-qemu.sh" -k "$KERNEL" -n "$2" -o "$1" -s "$3" -m 2048M -a "$4" -c "$5" \
		-t "${BOOT_TIMEOUT:-1800}" >>"$(dirname "$1")/boots.log" 2>&1 || rc=$?
	"$S/ktap-verdict.sh" -n "$2" "$1/ktap.log" "$1/console.log" "$(cat "$1/qemu-status")" \
		>"$1/verdict" || true
	return $rc
}

# boot REP SCHED CMDLINE: one demo boot into $out/raw/rep<REP>-<SCHED>. The guest gives up at
# once (status 3) when its vCPUs progress at very different speeds (the lab's -icount stall with
# 2 vCPUs, docs/lab.md); the boot is then retried with lab.try=N, which shifts the guest's timing.
boot() {
	local dir=$out/raw/rep$1-$2 try rc
	for try in 1 2 3; do
		rc=0
		run_boot "$dir" "demo-$2-$1" "$smp" "$accel" "$3 lab.run=demo $extra lab.try=$try" || rc=$?
		[ $rc = 3 ] || break
		say "rep $1 $2: $(tr -d '\r' <"$dir/ktap.log" | grep -m1 -o 'vcpu_balance=[0-9.]*') (a stalled vCPU), boot $try of 3"
		rm -rf "$dir.try$try"
		mv "$dir" "$dir.try$try"
	done
}

i=0 verdicts=()
for rep in $(seq 1 "$reps"); do
	for name in "${scheds[@]}"; do
		t0=$(date +%s)
		boot "$rep" "$name" "${sched_args[$name]}"
		verdicts+=("$out/raw/rep$rep-$name/verdict")
		i=$((i + 1))
		left=$(( ($(date +%s) - t_start) * (boots - i) / i / 60 ))
		say "boot $i/$boots (rep $rep, $name) $(tail -n 1 "$out/raw/rep$rep-$name/verdict") in $(since "$t0");" \
			"elapsed $(since "$t_start"), about $left min left"
	done
done
# Throughput at DEMO_SMP vCPUs: multi-threaded TCG, so guest time is host time; the columns are
# interleaved within each repetition, so a busy spell of the host falls on all of them alike.
if [ "$demo_smp" != 0 ]; then
	mkdir -p "$out/raw-smp"
	for rep in $(seq 1 "$reps"); do
		for name in "${scheds[@]}"; do
			t0=$(date +%s) dir=$out/raw-smp/rep$rep-$name
			run_boot "$dir" "demo-smp-$name-$rep" "$demo_smp" multi \
				"${sched_args[$name]} lab.run=demo-smp $extra" || true
			verdicts+=("$dir/verdict")
			say "throughput boot (rep $rep, $name, $demo_smp vCPUs) $(tail -n 1 "$dir/verdict") in $(since "$t0")"
		done
	done
fi
# the report refuses boots whose guest contradicts their column (scheduler, rsdl_lend)
"$S/demo-report.py" "$out"
echo
cat "$out/report.md"
echo
say "results in $out ($(since "$t_start"))"
if grep -h '^FAIL' "${verdicts[@]}"; then die "some demo boots were not clean (above)"; fi
