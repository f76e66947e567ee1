#!/usr/bin/env bash
# make boot: an interactive shell in a lab guest (the debug kernel unless KERNEL= is given).
#   SMP=2  RSDL=off (adds rsdl=off)  CMDLINE="extra kernel args"  ACCEL=multi|icount
# 'exit' or 'poweroff' in the guest (or Ctrl-a x) leaves QEMU.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=boot
S=$REPO/scripts
lab_chain debug
extra=${CMDLINE:-}
[ "${RSDL:-}" = off ] && extra="rsdl=off $extra"
exec "$S/run-qemu.sh" -I -k "$KERNEL" -n boot -s "${SMP:-2}" -a "${ACCEL:-multi}" -c "$extra"
