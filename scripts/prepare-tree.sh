#!/usr/bin/env bash
# Make $RSDL_WORK/linux exactly "base + patches/series".
#
# The first run unpacks the Debian linux-source-6.12 tarball into a git repository whose
# first commit (tag "base") is the pristine source. Later runs reset to base and re-apply
# the series with git am, but only when the series changed, and they give every file whose
# content came out the same as before its old mtime back, so that kbuild rebuilds only
# what really changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=tree
t0=$(date +%s)
STATE=$LINUX/.git/lab-applied # "series=<hash>" and "head=<commit>" of the last good apply

unpack() {
	local tmp=$RSDL_WORK/linux.unpack
	[ -f "$KSRC_TARBALL" ] || die "$KSRC_TARBALL not found (make deps installs linux-source-6.12)"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	say "unpacking $KSRC_TARBALL (once)"
	tar -xJf "$KSRC_TARBALL" -C "$tmp" --strip-components=1
	say "committing the pristine source as tag base"
	git -C "$tmp" init -q -b rsdl
	git -C "$tmp" config user.name "RSDL lab"
	git -C "$tmp" config user.email "lab@localhost"
	git -C "$tmp" config gc.auto 0
	git -C "$tmp" add -A -f
	git -C "$tmp" commit -q -m "base: Debian linux-source-6.12 $(kernel_version "$tmp")"
	git -C "$tmp" tag base
	printf 'series=%s\nhead=%s\n' "$(: | sha256sum | cut -d' ' -f1)" \
		"$(git -C "$tmp" rev-parse HEAD)" >"$tmp/.git/lab-applied"
	mv "$tmp" "$LINUX"
}

kernel_version() {
	awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2; print v "." p "." s; exit }' "$1/Makefile"
}

state() { sed -n "s/^$1=//p" "$STATE" 2>/dev/null; }

# remember_mtimes FILE: "blob<TAB>mtime<TAB>path" for every file the applied series changed
remember_mtimes() {
	local blob path
	git diff --raw --no-abbrev base HEAD | while IFS=$'\t' read -r meta path; do
		blob=$(echo "$meta" | cut -d' ' -f4)
		[ -f "$path" ] || continue
		git diff --quiet HEAD -- "$path" || continue # dirty: content is not the blob
		printf '%s\t%s\t%s\n' "$blob" "$(stat -c %.9Y "$path")" "$path"
	done >"$1"
}

# restore_mtimes FILE: give the old mtime back to files whose blob is unchanged
restore_mtimes() {
	local blob mtime path n=0
	while IFS=$'\t' read -r blob mtime path; do
		[ "$(git rev-parse -q --verify "HEAD:$path" 2>/dev/null)" = "$blob" ] || continue
		touch -m -d "@$mtime" "$path"
		n=$((n + 1))
	done <"$1"
	git update-index -q --refresh >/dev/null || true
	say "kept the old mtime of $n unchanged files"
}

mkdir -p "$RSDL_WORK"
[ -d "$LINUX/.git" ] || unpack
cd "$LINUX"
[ -d .git/rebase-apply ] && git am --abort

mapfile -t patches < <(series_patches)
for p in "${patches[@]}"; do
	[ -f "$REPO/patches/$p" ] || die "patches/series names $p, but patches/$p does not exist"
done
want=$(series_hash)
head=$(git rev-parse HEAD)
desc="${#patches[@]} patches on Linux $(kernel_version .)"

if [ "$want" = "$(state series)" ] && [ "$head" = "$(state head)" ]; then
	git diff --quiet HEAD || say "note: $LINUX has uncommitted changes; they will be built"
	say "series unchanged: $desc, HEAD $(git rev-parse --short HEAD) ($(since "$t0"))"
	exit 0
fi

if [ -z "${RSDL_RESET:-}" ]; then
	[ "$head" = "$(state head)" ] ||
		die "$LINUX has commits that are not in patches/ (HEAD $(git rev-parse --short HEAD)). Run 'make export-patches' to keep them, or set RSDL_RESET=1 to drop them."
	git diff --quiet HEAD ||
		die "$LINUX has uncommitted changes and the series changed. Commit and 'make export-patches', or set RSDL_RESET=1 to drop them."
fi

mtimes=$(mktemp)
trap 'rm -f "$mtimes"' EXIT
remember_mtimes "$mtimes"
printf 'series=none\nhead=none\n' >"$STATE"
git reset -q --hard base
if [ ${#patches[@]} -gt 0 ]; then
	say "applying $desc"
	if ! git am -q --whitespace=nowarn "${patches[@]/#/$REPO/patches/}"; then
		git am --abort || true
		git reset -q --hard base
		die "git am failed (see above); the tree was left at base"
	fi
else
	say "empty series: pristine Linux $(kernel_version .)"
fi
restore_mtimes "$mtimes"
printf 'series=%s\nhead=%s\n' "$want" "$(git rev-parse HEAD)" >"$STATE"
say "tree is base + $desc, HEAD $(git rev-parse --short HEAD) ($(since "$t0"))"
