#!/usr/bin/env bash
# Install (apt) what the lab needs, if missing, and print the kernel source version used.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=deps
pkgs=(linux-source-6.12 qemu-system-x86 busybox-static build-essential flex bison libelf-dev
	libssl-dev bc ccache cpio xz-utils rt-tests stress-ng trinity linux-perf gnuplot-nox kmod git
	python3 python3-ply python3-git)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	say "installing ${missing[*]}"
	sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
fi

[ -f "$KSRC_TARBALL" ] || die "$KSRC_TARBALL is missing"
makefile=$(tar -xJOf "$KSRC_TARBALL" --occurrence=1 linux-source-6.12/Makefile 2>/dev/null | head -n 5 || true)
version=$(echo "$makefile" | awk -F' *= *' '$1 == "VERSION" { v = $2 }
	$1 == "PATCHLEVEL" { p = $2 } $1 == "SUBLEVEL" { print v "." p "." $2 }')
say "${#pkgs[@]} packages present; kernel source: Linux $version from $KSRC_TARBALL" \
	"($(dpkg-query -W -f='${Package} ${Version}' linux-source-6.12))"
