#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make soak: long stress of the scheduler in QEMU guests, RSDL vs rsdl=off (EEVDF) on the
# soak kernel (base + debug + rsdl + soak: lockdep, KASAN, UBSAN) vs the pristine 6.12 kernel
# (the same configs without the series), side by side. Each boot runs guest/lab/run/soak for
# SOAK_MIN minutes of guest time: stress-ng's scheduler class, trinity on the scheduling
# syscalls (as nobody and as root), CPU hotplug, rr_interval writes (RSDL), cgroup moves.
# A boot fails on any kernel splat on the console (scripts/ktap-verdict.sh's detector), a
# failed part of the mix, or a timeout.
#
# Real-time/deadline load and CPU hotplug never run at once (the guest runs hotplug in the
# first half, stress-ng's schedpolicy and cyclic and root trinity in the second): upstream
# 6.12.118 WARNs at kernel/sched/deadline.c:265 (running_bw underflow) on either scheduler when
# a CPU whose fair server RT load had made run goes offline (sched_cpu_dying() stops the
# already stopped server again). See guest/lab/run/soak and docs/soak.md.
#
#   SOAK_MIN=10                minutes of guest time per boot
#   SOAK_KERNEL=bzImage        prebuilt image for the RSDL and EEVDF columns (no tree, no build)
#   PRISTINE_KERNEL=bzImage    prebuilt image for the pristine column (no worktree, no build)
#   SOAK_BOOTS="rsdl-smp2 ..." boots to run (default: {rsdl,eevdf,pristine}-smp{1,2,4})
#   BOOT_TIMEOUT=seconds       per boot (default: 4 x SOAK_MIN + 15 minutes)
#   BOOT_JOBS=N                1-vCPU (icount) boots side by side (default: nproc); the
#                              SMP boots (multi-threaded TCG) run one at a time
#   SOAK_ICOUNT_SHIFT=2        the 1-vCPU boots' icount shift (guest ns per instruction = 2^N)
#   SOAK_CMDLINE="..."         more kernel parameters: soak.hotplug=0 (no CPU hotplug, which
#                              the upstream warning needs), soak.dl_hotplug=1 (RT/DL users and
#                              hotplug together, to reproduce it)
# Output: one "soak <boot>: ..." line per boot, a table RSDL | EEVDF | pristine per vCPU
# count with verdicts and wall times, "N passed, N failed"; all of it in
# $RSDL_WORK/results/<time>-soak/summary.txt, the boots' logs in $RSDL_WORK/runs/<time>-soak/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=soak
S=$REPO/scripts
t_start=$(date +%s)
SOAK_MIN=${SOAK_MIN:-10}
[[ $SOAK_MIN =~ ^[0-9]+$ ]] && [ "$SOAK_MIN" -gt 0 ] || die "SOAK_MIN=$SOAK_MIN: a whole number of minutes"
all="rsdl-smp1 eevdf-smp1 pristine-smp1 rsdl-smp2 eevdf-smp2 pristine-smp2 rsdl-smp4 eevdf-smp4 pristine-smp4"
boots=${SOAK_BOOTS:-$all}
for b in $boots; do
	[[ $b =~ ^(rsdl|eevdf|pristine)-smp[0-9]+$ ]] || die "unknown boot '$b' (e.g. $all)"
done
timeout_s=${BOOT_TIMEOUT:-$((4 * SOAK_MIN * 60 + 900))}

kernels=() # the soak kernel for the RSDL and EEVDF columns, the pristine one for its own
[[ ! " $boots" =~ \ (rsdl|eevdf)- ]] || kernels+=(soak:SOAK_KERNEL)
[[ ! " $boots" =~ \ pristine- ]] || kernels+=(pristine:PRISTINE_KERNEL)
lab_chain "${kernels[@]}"

stamp=$(date +%Y%m%d-%H%M%S)
runs=$RSDL_WORK/runs/$stamp-soak
res=$RSDL_WORK/results/$stamp-soak
mkdir -p "$runs" "$res"
say "SOAK_MIN=$SOAK_MIN, boots: $boots"
say "soak kernel: ${SOAK_KERNEL:-none}; pristine kernel: ${PRISTINE_KERNEL:-none}"
say "expect about $SOAK_MIN min of guest time per boot plus boot time; logs in $runs"

# The hung-task detector's timeout for an emulated machine: syzbot's for its QEMU-emulated
# targets (420 s, three times its native 140 s), checked every 20 s. With the default 120 s,
# 4-vCPU soaks (4 TCG vCPUs on 2 host cores, KASAN) reported loadavg threads queued on one
# file position lock on RSDL and on EEVDF alike, and on RSDL once a CPU online that took over
# 122 s; how long transitions take is printed instead (hotplug_max_*_ms) for both schedulers.
detectors="sysctl.kernel.hung_task_timeout_secs=420 sysctl.kernel.hung_task_check_interval_secs=20"
# Those sysctls apply only once /init runs. Before that the timeout is 120 s, and on 1 vCPU
# under icount the soak kernel (KASAN) took 350-460 s of guest time to unpack the initramfs
# while PID 1 waited for it in D state: a hung-task report on every 1-vCPU boot, before any
# of the soak ran. initramfs_async=0 has PID 1 unpack it itself (running, not waiting).
boot_args="initramfs_async=0"

# The 1-vCPU boots run under icount with one instruction = 2^SOAK_ICOUNT_SHIFT ns of guest
# time. With the lab's usual shift of 4 (62.5 million instructions per guest second) the
# KASAN kernel ran the mix so slowly that most stressors did 0-1 bogo ops in 600 s on both
# schedulers, stress-ng wound down for 400-1500 s past the end, and parts were killed
# unfinished. Shift 2 (250 million per second) is four times the guest CPU for the same
# guest time, at about the same wall time as the SMP boots.
SOAK_ICOUNT_SHIFT=${SOAK_ICOUNT_SHIFT:-2}
[[ $SOAK_ICOUNT_SHIFT =~ ^[0-9]$ ]] || die "SOAK_ICOUNT_SHIFT=$SOAK_ICOUNT_SHIFT: 0 to 9"

# run_boot NAME: boot, judge, write $runs/NAME/{verdict,summary,took}
run_boot() {
	local b=$1 dir=$runs/$1 kind=${1%-smp*} smp=${1##*-smp} kernel cmdline accel t0 rc st
	mkdir -p "$dir"
	cmdline="lab.run=soak soak.sec=$((SOAK_MIN * 60)) $detectors $boot_args ${SOAK_CMDLINE:-}"
	case $kind in
	rsdl) kernel=$SOAK_KERNEL ;;
	eevdf) kernel=$SOAK_KERNEL cmdline="rsdl=off $cmdline" ;;
	# rsdl=off: a harmless unknown parameter on a pristine kernel; with an image that does
	# have RSDL (a mistaken PRISTINE_KERNEL) the column is still EEVDF, and marked below
	pristine) kernel=$PRISTINE_KERNEL cmdline="rsdl=off $cmdline" ;;
	esac
	if [ "$smp" = 1 ]; then accel=icount; else accel=multi; fi
	t0=$(date +%s)
	ICOUNT_SHIFT=$SOAK_ICOUNT_SHIFT "$S/run-qemu.sh" -k "$kernel" -n "$b" -o "$dir" -s "$smp" \
		-m 2048M -a "$accel" \
		-c "$cmdline" -t "$timeout_s" >"$dir/qemu-run.out" 2>&1 || true
	echo $(($(date +%s) - t0)) >"$dir/took"
	rc=0
	"$S/ktap-verdict.sh" -n "$b" "$dir/ktap.log" "$dir/console.log" \
		"$(cat "$dir/qemu-status")" >"$dir/verdict" || rc=$?
	local counters splats verdict
	counters=$(sed -n 's/^# soak-counters: //p' "$dir/ktap.log" | tr -d '\r' | tail -n 1)
	[ -n "$counters" ] ||
		counters="trinity_calls=? stress_ng_bogo_ops=? hotplug_cycles=? rr_writes=? cgroup_moves=?"
	splats=$(sed -n "s/^FAIL  $b\/console  (\([0-9]*\) splat lines.*/\1/p" "$dir/verdict")
	if [ "$rc" = 0 ]; then verdict=PASS; else verdict=FAIL; fi
	echo "soak $b: $counters splats=${splats:-0} verdict=$verdict" >"$dir/summary"
	if [ "$kind" = pristine ] && grep -q 'scheduler rsdl' "$dir/ktap.log"; then
		echo "  note: $b ran RSDL: PRISTINE_KERNEL is not a pristine kernel" >>"$dir/summary"
	elif [ "$kind" = pristine ] && ! grep -q 'no /sys/kernel/rsdl' "$dir/ktap.log"; then
		echo "  note: $b: PRISTINE_KERNEL has RSDL built in (booted rsdl=off), not a pristine kernel" >>"$dir/summary"
	fi
	st=$(grep -c '^FAIL  ' "$dir/verdict" || true)
	[ "$st" = 0 ] || grep '^FAIL  \|^        ' "$dir/verdict" | head -n 12 | sed 's/^/  /' >>"$dir/summary"
	say "$(head -n 1 "$dir/summary") ($(since "$t0"))"
}

side_by_side= one_by_one=
for b in $boots; do
	if [ "${b##*-smp}" = 1 ]; then side_by_side+=" $b"; else one_by_one+=" $b"; fi
done
for b in $side_by_side; do
	while [ "$(jobs -rp | wc -l)" -ge "${BOOT_JOBS:-$(nproc)}" ]; do wait -n || true; done
	run_boot "$b" &
done
wait
for b in $one_by_one; do run_boot "$b"; done

cell() { # cell BOOT: "PASS 12m03s" or "-" when not run
	local d=$runs/$1 s
	[ -f "$d/summary" ] || { echo "-"; return; }
	s=$(cat "$d/took")
	printf '%s %dm%02ds' "$(sed -n '1s/.*verdict=//p' "$d/summary")" $((s / 60)) $((s % 60))
}
{
	echo "===== make soak: SOAK_MIN=$SOAK_MIN (guest minutes per boot)${SOAK_CMDLINE:+, SOAK_CMDLINE=$SOAK_CMDLINE}"
	echo "soak kernel: ${SOAK_KERNEL:-none}"
	echo "pristine kernel: ${PRISTINE_KERNEL:-none}"
	for b in $boots; do cat "$runs/$b/summary" 2>/dev/null || echo "soak $b: not run verdict=FAIL"; done
	echo
	printf '%-6s | %-16s | %-16s | %-16s\n' vCPUs RSDL EEVDF pristine
	for n in $(for b in $boots; do echo "${b##*-smp}"; done | sort -nu); do
		printf '%-6s | %-16s | %-16s | %-16s\n' "$n" "$(cell rsdl-smp$n)" "$(cell eevdf-smp$n)" "$(cell pristine-smp$n)"
	done
	echo "(verdict and wall time per boot; logs: $runs)"
	echo "total wall time: $(since "$t_start")"
	# The pristine column attributes splats (one it shows too is upstream's); the verdict
	# is the RSDL and EEVDF columns'.
	passed=0 failed=0
	for b in $boots; do
		[ "${b%-smp*}" != pristine ] || continue
		if grep -q 'verdict=PASS' "$runs/$b/summary" 2>/dev/null; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
		fi
	done
	echo "$passed passed, $failed failed (RSDL and EEVDF boots; pristine: reference)"
} | tee "$res/summary.txt"
grep -q ' 0 failed (' "$res/summary.txt"
