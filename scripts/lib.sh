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
