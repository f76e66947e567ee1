# Common settings for the lab scripts (sourced, not run).
RSDL_WORK=${RSDL_WORK:-$HOME/.cache/rsdl-lab}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LINUX=$RSDL_WORK/linux
KSRC_TARBALL=${KSRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
export CCACHE_DIR=${CCACHE_DIR:-$RSDL_WORK/ccache}

say() { printf '[%s] %s\n' "${STAGE:-lab}" "$*"; }
die() { printf '[%s] error: %s\n' "${STAGE:-lab}" "$*" >&2; exit 1; }

# since T: minutes and seconds elapsed since the epoch second T
since() {
	local s=$(($(date +%s) - $1))
	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# timed NAME CMD...: run a stage, remember its wall time in timings (make check prints them)
timings=()
timed() {
	local name=$1 t0
	shift
	t0=$(date +%s)
	"$@"
	timings+=("$(printf '%-20s %s' "$name" "$(since "$t0")")")
}

# lab_chain [FLAVOUR[:VAR]]...: the build chain of make check, demo, boot and soak. deps.sh;
# then for each FLAVOUR whose VAR (default KERNEL) is empty: the tree (prepare-tree.sh;
# for pristine, prepare-pristine.sh and the tree only if there is none) and build-kernel.sh
# FLAVOUR, and VAR set to its bzImage; a VAR given names a prebuilt image, which must exist.
# Then build-initramfs.sh. Each stage is timed: deps, tree, pristine, kernel-FLAVOUR, initramfs.
lab_chain() {
	local fv flavour var
	timed deps "$REPO/scripts/deps.sh"
	for fv in "$@"; do
		flavour=${fv%%:*} var=KERNEL
		[ "$fv" = "$flavour" ] || var=${fv#*:}
		if [ -z "${!var:-}" ]; then
			if [ "$flavour" != pristine ]; then
				timed tree "$REPO/scripts/prepare-tree.sh"
			else
				[ -e "$LINUX/.git" ] || timed tree "$REPO/scripts/prepare-tree.sh"
				timed pristine "$REPO/scripts/prepare-pristine.sh"
			fi
			timed "kernel-$flavour" "$REPO/scripts/build-kernel.sh" "$flavour"
			printf -v "$var" '%s' "$RSDL_WORK/build-$flavour/arch/x86/boot/bzImage"
		fi
		[ -f "${!var}" ] || die "$var=${!var} does not exist"
	done
	timed initramfs "$REPO/scripts/build-initramfs.sh"
}

# series_patches: the patch files named in patches/series, one per line
series_patches() {
	[ -f "$REPO/patches/series" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^[[:space:]]*$/d' "$REPO/patches/series"
}

# series_hash: one hash over the names and contents of the series' patches
series_hash() {
	local p
	{
		series_patches | while read -r p; do
			printf '%s\n' "$p"
			cat "$REPO/patches/$p"
		done
	} | sha256sum | cut -d' ' -f1
}
