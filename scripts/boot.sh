#!/usr/bin/env bash
# make boot: an interactive shell in a lab guest (the debug kernel unless KERNEL= is given).
#   SMP=2  RSDL=off (adds rsdl=off)  CMDLINE="extra kernel args"  ACCEL=multi|icount
# 'exit' or 'poweroff' in the guest (or Ctrl-a x) leaves QEMU.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=boot
S=$REPO/scripts
"$S/deps.sh"
if [ -z "${KERNEL:-}" ]; then
	"$S/prepare-tree.sh"
	"$S/build-kernel.sh" debug
	KERNEL=$RSDL_WORK/build-debug/arch/x86/boot/bzImage
fi
"$S/build-initramfs.sh"
extra=${CMDLINE:-}
[ "${RSDL:-}" = off ] && extra="rsdl=off $extra"
exec "$S/run-qemu.sh" -I -k "$KERNEL" -n boot -s "${SMP:-2}" -a "${ACCEL:-multi}" -c "$extra"
