#!/usr/bin/env bash
# Build $RSDL_WORK/initramfs-lab.cpio.gz: static busybox with its applet links, /init and
# the run scripts of guest/lab, the guest test programs (make -C guest/tests O=...), and
# Debian's cyclictest, hackbench, stress-ng, trinity and perf with their shared libraries.
# Only rebuilt when one of these inputs changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=initramfs
OUT=$RSDL_WORK/initramfs-lab.cpio.gz
GB=$RSDL_WORK/guest-build # compiled guest programs
ROOT=$RSDL_WORK/initramfs-root
LAB=$REPO/guest/lab
TESTS=$REPO/guest/tests
t0=$(date +%s)
mkdir -p "$GB/tests"

# Guest programs: the test programs and qemu-exit
if [ -f "$TESTS/Makefile" ]; then
	make -s -C "$TESTS" O="$GB/tests" >"$GB/tests.log" 2>&1 ||
		{ cat "$GB/tests.log"; die "building guest/tests failed"; }
else
	say "note: no guest/tests/Makefile, no guest test programs"
fi
# make demo's benchmark programs (guest/bench), installed in /lab/bin
if [ -f "$REPO/guest/bench/Makefile" ]; then
	make -s -C "$REPO/guest/bench" O="$GB/bench" >"$GB/bench.log" 2>&1 ||
		{ cat "$GB/bench.log"; die "building guest/bench failed"; }
fi
bench_bins() { find "$GB/bench" -maxdepth 1 -type f -perm -u+x 2>/dev/null | sort; }
if [ ! -x "$GB/qemu-exit" ] || [ "$LAB/qemu-exit.c" -nt "$GB/qemu-exit" ]; then
	gcc -O2 -Wall -static -o "$GB/qemu-exit" "$LAB/qemu-exit.c"
fi

# Debian tools; /usr/bin/perf may be a wrapper script calling /usr/bin/perf_<version>
host_tool() {
	local p
	p=$(command -v "$1") || die "$1 not found (make deps)"
	if [ "$(head -c 2 "$p")" = "#!" ]; then
		p=$(ls /usr/bin/"$1"_[0-9]* 2>/dev/null | sort -V | tail -n 1)
		[ -n "$p" ] || die "$1 is a wrapper script and no /usr/bin/$1_<version> exists"
	fi
	echo "$p"
}
declare -A tools
for t in cyclictest hackbench stress-ng trinity perf; do tools[$t]=$(host_tool "$t"); done
libs=$(for p in "${tools[@]}"; do ldd "$p" || true; done |
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)

test_bins() { find "$GB/tests" -maxdepth 1 -type f -perm -u+x | sort; }
test_extras() { find "$TESTS" -maxdepth 1 -type f \( -name suite.list -o -name '*.sh' \) | sort; }

inputs_hash() {
	{
		sha256sum "$0" "$GB/qemu-exit" $(find "$LAB" -type f | sort) $(test_bins) $(test_extras) $(bench_bins)
		stat -L -c '%n %s %Y' /bin/busybox "${tools[@]}" $libs
	} | sha256sum | cut -d' ' -f1
}
want=$(inputs_hash)
if [ -f "$OUT" ] && [ "$want" = "$(cat "$OUT.inputs" 2>/dev/null)" ]; then
	say "up to date: $OUT ($(du -h "$OUT" | cut -f1))"
	exit 0
fi

rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,lab/bin,lab/run,lab/tests}
cd "$ROOT"
cp /bin/busybox bin/busybox
for a in $(bin/busybox --list-full); do
	[ -e "$a" ] || ln -s /bin/busybox "$a"
done
for t in "${!tools[@]}"; do cp -L "${tools[$t]}" "usr/bin/$t"; done
for l in $libs; do
	mkdir -p "./$(dirname "$l")"
	cp -L "$l" "./$l"
done
install -m 755 "$LAB/init" init
install -m 755 "$GB/qemu-exit" lab/bin/
for f in $(bench_bins); do install -m 755 "$f" lab/bin/; done
install -m 755 "$LAB"/run/* lab/run/
chmod 644 lab/run/*.list
for f in $(test_bins) $(test_extras); do cp "$f" lab/tests/; done
cp "$LAB/profile" etc/profile
# nobody/nogroup: trinity -X (the soak) drops to the user it finds with getpwnam("nobody")
# vforker: the soak's vforkmany stressor, under an RLIMIT_NPROC of its own
printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
	'vforker:x:65533:65534:vforkmany:/nonexistent:/bin/false' >etc/passwd
printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >etc/group
mknod -m 600 dev/console c 5 1 2>/dev/null || true
find . -print0 | sort -z | cpio --null -o -H newc --owner=0:0 --quiet | gzip -6 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "$want" >"$OUT.inputs"
say "built $OUT: $(du -h "$OUT" | cut -f1), $(test_bins | wc -l) test programs, $(test_extras | wc -l) list/script files ($(since "$t0"))"
