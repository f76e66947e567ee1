#!/usr/bin/env bash
# make check: deps -> tree -> series check -> debug kernel -> initramfs -> harness
# self-tests -> boots, one verdict line per test, "N passed, N failed" at the end.
#   BOOTS="selftest-warn eevdf-smp2 ..."  run only these boots
#   KERNEL=/path/bzImage                  test that image instead of building one
#   ACCEL=icount|multi  (default: icount for 1-CPU boots, multi for SMP boots; see docs/lab.md)
#   BOOT_TIMEOUT=seconds (per boot, default 1200)
#   BOOT_JOBS=N  icount boots run side by side, N at once (default: nproc)
#   SERIES=0  skip check-series.sh (git am, checkpatch --strict, build of every commit)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=check
S=$REPO/scripts
t_start=$(date +%s)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# run_series LOG: check-series.sh, its output shown and kept in LOG (its failure is a verdict)
run_series() {
	"$S/check-series.sh" 2>&1 | tee "$1" || true
}

given_kernel=${KERNEL:-}
# The series check builds every commit into the debug kernel's build directory, the last
# one being HEAD, so it comes first: the debug kernel build of lab_chain then has nothing
# left to do (the chain's deps and tree stages repeat as no-ops).
if [ -z "$given_kernel" ] && [ "${SERIES:-1}" != 0 ]; then
	timed deps "$S/deps.sh"
	timed tree "$S/prepare-tree.sh"
	series_log=$(mktemp)
	timed series run_series "$series_log"
	grep -E '^(PASS|FAIL)  series/' "$series_log" >>"$results" ||
		echo "FAIL  series/run  (check-series.sh printed no verdict)" >>"$results"
	rm -f "$series_log"
fi
lab_chain debug # timed stages: deps, tree, kernel-debug, initramfs
if [ -z "$given_kernel" ]; then
	kconfig=$RSDL_WORK/build-debug/.config
else
	KERNEL=$(realpath "$KERNEL")
	kconfig=$(mktemp)
	ikconfig=$LINUX/scripts/extract-ikconfig
	if ! { [ -x "$ikconfig" ] && "$ikconfig" "$KERNEL" >"$kconfig" 2>/dev/null; }; then
		# a build directory's .config, or NAME.config beside NAME-bzImage (/work/images)
		cp "$(dirname "$KERNEL")/../../../../.config" "$kconfig" 2>/dev/null ||
			cp "${KERNEL%-bzImage}.config" "$kconfig" 2>/dev/null ||
			say "warning: cannot read the config of $KERNEL (no IKCONFIG, no .config beside it)"
	fi
fi

has_rsdl=
grep -q '^CONFIG_SCHED_RSDL=y' "$kconfig" 2>/dev/null && has_rsdl=1
ver=$(strings "$KERNEL" | grep -m1 -o '^6\.[0-9.]*[^ ]* ([^)]*)' || true)
say "kernel: $KERNEL (${ver:-?})," \
	"$([ -n "$has_rsdl" ] && echo 'CONFIG_SCHED_RSDL=y' || echo 'no CONFIG_SCHED_RSDL')"

all="selftest-warn selftest-fail eevdf-smp1 rsdl-smp1 eevdf-smp2 rsdl-smp2 eevdf-smp4 rsdl-smp4
	eevdf-smp4-iso rsdl-smp4-iso eevdf-smp6-llc rsdl-smp6-llc"
boots=${BOOTS:-$all}
runs=$RSDL_WORK/runs/$(date +%Y%m%d-%H%M%S)-check
# The trace instance "lab" has sched_switch enabled from start_kernel(), before the other
# CPUs run, so the accounting test never patches __schedule() at run time: under QEMU's
# multi-threaded TCG that crashed guests (Oops: int3, stock EEVDF too; accounting.c).
suite_cmdline="lab.run=suite trace_instance=lab^traceoff,sched:sched_switch"
# boot_shape BOOT: "SMP|EXTRA" for an eevdf-smpN[-TAG] or rsdl-smpN[-TAG] boot: QEMU's -smp
# value and the extra command line. The tagged boots run only the suite lines of their tag:
# -iso: CPU 3 outside every sched domain; -llc: three last-level caches of two CPUs.
boot_shape() {
	local n=${1#*-smp} tag
	tag=${n#*-}
	n=${n%%-*}
	[ "$tag" != "$n" ] || tag=
	case $tag in
	"") echo "$n|" ;;
	iso) echo "$n|isolcpus=domain,3 lab.tag=iso" ;;
	llc) echo "$n,sockets=3,cores=2|lab.tag=llc" ;;
	*) return 1 ;;
	esac
}
not_run=()

# boot_accel SMP: how QEMU runs a boot with SMP vCPUs: ACCEL if set, else icount for one
# vCPU and multi for more (see ACCEL in docs/lab.md)
boot_accel() {
	if [ -n "${ACCEL:-}" ]; then echo "$ACCEL"; elif [ "$1" = 1 ]; then echo icount; else echo multi; fi
}

# boot NAME SMP CMDLINE: boot once, judge it into $runs/NAME/verdict; returns the verdict
boot() {
	local name=$1 smp=$2 cmdline=$3 dir=$runs/$1 accel
	accel=$(boot_accel "$smp")
	mkdir -p "$dir"
	"$S/run-qemu.sh" -k "$KERNEL" -n "$name" -o "$dir" -s "$smp" -c "$cmdline" \
		-a "$accel" -t "${BOOT_TIMEOUT:-1200}" || true
	"$S/ktap-verdict.sh" -n "$name" "$dir/ktap.log" "$dir/console.log" \
		"$(cat "$dir/qemu-status")" >"$dir/verdict"
}

# smp_numbers: the SMP placement and balancing tests' measured values side by side, from the
# greppable "key=value" lines of each boot's ktap.log, and the RSDL/EEVDF throughput ratio
# of the 4-CPU boots (median seconds, lower is better: ratio > 1 = RSDL slower)
smp_numbers() {
	local b f v keys='jain_index|wake_p99_us|baseline_p99_us|hackbench_s|messaging_s|hackbench_ctxt|messaging_ctxt|iso_pct|llc_pct|idle_kicks'
	for b in $boots; do
		f=$runs/$b/ktap.log
		[ -f "$f" ] || continue
		v=$(grep -oE "($keys)=[0-9.]+" "$f" | tr '\n' ' ' || true)
		[ -z "$v" ] || echo "numbers $b: $v"
	done
	[ -f "$runs/rsdl-smp4/ktap.log" ] && [ -f "$runs/eevdf-smp4/ktap.log" ] || return 0
	# seconds, then context switches per run (the throughput test's medians)
	for v in hackbench_s messaging_s hackbench_ctxt messaging_ctxt; do
		awk -v k="$v" -F'[= ]' '
			FNR == 1 { n++ }
			{ for (i = 1; i < NF; i++) if ($i == k) x[n] = $(i + 1) }
			END { if (x[1] > 0 && x[2] > 0)
				printf "throughput smp4 %s: RSDL %g / EEVDF %g = %.2f\n", k, x[1], x[2], x[1] / x[2] }
		' "$runs/rsdl-smp4/ktap.log" "$runs/eevdf-smp4/ktap.log"
	done
}

# run_boot NAME: boot NAME and judge it. Its verdict lines go to $runs/NAME/results, a
# reason it could not run to $runs/NAME/not-run, its wall time to $runs/NAME/took, and
# what a person reads to stdout once the boot is over.
run_boot() {
	local b=$1 t0 out=$runs/$1/results smp extra
	t0=$(date +%s)
	mkdir -p "$runs/$b"
	: >"$out"
	case $b in
	selftest-warn)
		# The harness must fail a boot whose kernel WARNed, even if the KTAP passed.
		if ! grep -q '^CONFIG_LKDTM=y' "$kconfig" 2>/dev/null; then
			echo "$b(no CONFIG_LKDTM)" >"$runs/$b/not-run"
			return 0
		fi
		if boot "$b" 1 "lab.run=selftest-warn"; then :; fi
		if grep -q "^FAIL  $b/console" "$runs/$b/verdict" && grep -q 'WARNING:' "$runs/$b/verdict"; then
			echo "PASS  harness/$b  (splat detected: $(grep -m1 -o 'WARNING:.*' "$runs/$b/verdict" | cut -c1-70))" >>"$out"
		else
			echo "FAIL  harness/$b  (the LKDTM WARNING was not detected; see $runs/$b)" >>"$out"
		fi
		;;
	selftest-fail)
		# The harness must fail a boot in which a guest test failed.
		if boot "$b" 1 "lab.run=selftest-fail"; then :; fi
		if grep -q "^FAIL  $b/lab-false" "$runs/$b/verdict" && grep -q "^PASS  $b/lab-true" "$runs/$b/verdict"; then
			echo "PASS  harness/$b  (failing guest test detected: $(grep -m1 "^FAIL  $b/lab-false" "$runs/$b/verdict" | cut -c7-90))" >>"$out"
		else
			echo "FAIL  harness/$b  (the failing guest test was not reported; see $runs/$b)" >>"$out"
		fi
		;;
	eevdf-smp*)
		IFS='|' read -r smp extra <<<"$(boot_shape "$b")"
		boot "$b" "$smp" "rsdl=off $extra $suite_cmdline" || true
		grep -E '^(PASS|FAIL)  ' "$runs/$b/verdict" >>"$out"
		;;
	rsdl-smp*)
		if [ -z "$has_rsdl" ]; then
			echo "$b" >"$runs/$b/not-run"
			return 0
		fi
		IFS='|' read -r smp extra <<<"$(boot_shape "$b")"
		boot "$b" "$smp" "$extra $suite_cmdline" || true
		grep -E '^(PASS|FAIL)  ' "$runs/$b/verdict" >>"$out"
		;;
	esac
	[ ! -f "$runs/$b/verdict" ] || grep -v "^$b: " "$runs/$b/verdict" || true
	printf '%-20s %s' "boot $b" "$(since "$t0")" >"$runs/$b/took"
}

# Boots under icount do not depend on the host's load (guest time is the instruction
# count, see ACCEL in docs/lab.md), so they run side by side, up to BOOT_JOBS (default: the
# host's CPUs) at once. The others time everything on the host's clock: they run after,
# one at a time, alone on the machine.
side_by_side= one_by_one=
for b in $boots; do
	case $b in
	selftest-warn | selftest-fail) smp=1 ;;
	eevdf-smp[0-9]* | rsdl-smp[0-9]*)
		smp=$(boot_shape "$b") || die "unknown boot '$b' (known: $all)"
		smp=${smp%%|*}
		;;
	*) die "unknown boot '$b' (known: $all)" ;;
	esac
	if [ "$(boot_accel "$smp")" = icount ]; then side_by_side+=" $b"; else one_by_one+=" $b"; fi
done
for b in $side_by_side; do
	while [ "$(jobs -rp | wc -l)" -ge "${BOOT_JOBS:-$(nproc)}" ]; do wait -n || true; done
	run_boot "$b" &
done
wait
for b in $one_by_one; do
	run_boot "$b"
done
for b in $boots; do
	[ ! -f "$runs/$b/results" ] || cat "$runs/$b/results" >>"$results"
	if [ -f "$runs/$b/not-run" ]; then
		not_run+=("$(cat "$runs/$b/not-run")")
	elif [ -f "$runs/$b/took" ]; then
		timings+=("$(cat "$runs/$b/took")")
	else
		echo "FAIL  $b/run  (the harness stopped before judging this boot; see $runs/$b)" >>"$results"
	fi
done

echo
echo "===== make check: $KERNEL"
grep -E '^[A-Z]*  (harness|series)/' "$results" || true
for b in $boots; do
	n=$(grep -c "^[A-Z]*  $b/" "$results" || true)
	[ "$n" = 0 ] || echo "$b: $(grep -c "^PASS  $b/" "$results" || true) passed, $(grep -c "^FAIL  $b/" "$results" || true) failed"
done
grep '^FAIL  ' "$results" || true
smp_numbers
if [ ${#not_run[@]} -gt 0 ]; then
	echo "NOT RUN: ${not_run[*]} — the kernel lacks the option (rsdl-*: CONFIG_SCHED_RSDL=y, series without RSDL yet)"
fi
echo "logs: $runs"
echo "wall time:"
printf '  %s\n' "${timings[@]}" "$(printf '%-20s %s' total "$(since "$t_start")")"
passed=$(grep -c '^PASS  ' "$results" || true)
failed=$(grep -c '^FAIL  ' "$results" || true)
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
