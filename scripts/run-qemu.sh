#!/usr/bin/env bash
# Boot a lab kernel in QEMU (TCG). The console (ttyS0) goes to console.log and ttyS1 (the
# guest's KTAP channel) to ktap.log in the run directory.
#
# usage: run-qemu.sh -k BZIMAGE [-i INITRAMFS] [-s SMP] [-m MEM] [-a multi|icount]
#                    [-c "EXTRA CMDLINE"] [-n NAME] [-o RUNDIR] [-t TIMEOUT_S] [-I]
#   -a icount: -accel tcg,thread=single -icount shift=4,sleep=off (reproducible guest
#              time, the default; ICOUNT_SHIFT=N in the environment sets the shift: one
#              instruction = 2^N ns of guest time); multi: -accel tcg,thread=multi (faster
#              wall time)
#   -I         interactive: the console is this terminal (Ctrl-a x quits), no timeout
#
# Exit status: the guest's status (from isa-debug-exit), 124 on timeout, 125 when the guest
# ended without reporting a status (panic, reboot, poweroff), 126 when QEMU failed.
# The raw QEMU status is kept in RUNDIR/qemu-status.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=qemu
kernel= initrd=$RSDL_WORK/initramfs-lab.cpio.gz smp=2 mem=1024M accel=icount extra= name=boot
dir= limit=900 interactive=
while getopts k:i:s:m:a:c:n:o:t:I opt; do
	case $opt in
	k) kernel=$OPTARG ;;
	i) initrd=$OPTARG ;;
	s) smp=$OPTARG ;;
	m) mem=$OPTARG ;;
	a) accel=$OPTARG ;;
	c) extra=$OPTARG ;;
	n) name=$OPTARG ;;
	o) dir=$OPTARG ;;
	t) limit=$OPTARG ;;
	I) interactive=1 ;;
	*) sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 126 ;;
	esac
done
[ -f "$kernel" ] || die "no kernel image '$kernel' (-k)"
[ -f "$initrd" ] || die "no initramfs '$initrd' (-i)"
dir=${dir:-$RSDL_WORK/runs/$(date +%Y%m%d-%H%M%S)-$name}
mkdir -p "$dir"

case $accel in
multi) accel_args=(-accel tcg,thread=multi) ;;
icount) accel_args=(-accel tcg,thread=single -icount "shift=${ICOUNT_SHIFT:-4},sleep=off") ;;
*) die "unknown accel mode '$accel' (multi or icount)" ;;
esac
# lab.clock tells the guest's tests whether its clock follows the instruction count
# (icount: timing bounds hold whatever the host does) or the host's clock (multi: a vCPU
# the host descheduled shows up as latency and as runtime that did no work).
cmdline="console=ttyS0 loglevel=7 panic=-1 schedstats=enable lab.clock=$accel $extra"
qemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot
	"${accel_args[@]}" -cpu qemu64 -smp "$smp" -m "$mem"
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04)
if [ -n "$interactive" ]; then
	qemu+=(-chardev "stdio,id=con,mux=on,signal=off,logfile=$dir/console.log"
		-serial chardev:con -mon chardev=con,mode=readline -serial "file:$dir/ktap.log")
else
	qemu+=(-serial "file:$dir/console.log" -serial "file:$dir/ktap.log" -monitor none)
fi
printf '%q ' "${qemu[@]}" >"$dir/qemu.cmd"
echo >>"$dir/qemu.cmd"

t0=$(date +%s)
rc=0
if [ -n "$interactive" ]; then
	say "$name: interactive console, Ctrl-a x quits QEMU; logs in $dir"
	"${qemu[@]}" || rc=$?
else
	say "$name: smp $smp, $accel, cmdline '$cmdline', timeout ${limit}s, logs in $dir"
	timeout -k 10 "$limit" "${qemu[@]}" </dev/null >"$dir/qemu.out" 2>&1 || rc=$?
fi
echo "$rc" >"$dir/qemu-status"
echo "$(($(date +%s) - t0))" >"$dir/wall-seconds"
if [ $rc = 124 ] || [ $rc = 137 ]; then
	say "$name: TIMEOUT after $(since "$t0")"
	exit 124
elif [ $((rc % 2)) = 1 ]; then
	say "$name: guest status $((rc >> 1)) after $(since "$t0")"
	exit $((rc >> 1))
elif [ $rc = 0 ]; then
	say "$name: guest ended without a status (panic, reboot or poweroff) after $(since "$t0")"
	exit 125
else
	say "$name: QEMU failed with status $rc after $(since "$t0"): $(tail -n 3 "$dir/qemu.out" 2>/dev/null)"
	exit 126
fi
