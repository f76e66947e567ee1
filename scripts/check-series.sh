#!/usr/bin/env bash
# check-series.sh — what a maintainer checks before taking patches/:
#   1. git am of the whole series onto pristine Linux (tag base) succeeds: prepare-tree.sh
#      made $LINUX that way; this checks that base..HEAD is one commit per patch;
#   2. scripts/checkpatch.pl --strict on every patch: no ERROR, no WARNING, and no CHECK
#      except the one known false positive below;
#   3. every commit of the series builds on its own (bzImage, the debug flavour's config,
#      so the KUnit patch is compiled too).
# The commits are built in order, checked out one after the other in $LINUX, into the debug
# kernel's own build directory ($RSDL_WORK/build-debug): kbuild then recompiles between two
# commits only what changed, and the last commit is HEAD, so the debug kernel of make check
# is already built when this ends. $LINUX must have no uncommitted changes; it is back at
# its HEAD afterwards (also when interrupted).
#
# Two of the builds are full ones whatever the order: the commits before the one that adds
# the RSDL task state to include/linux/sched.h (which nearly every object includes), and that
# one. A build directory shared with the debug kernel saves the third.
#
# The allowed CHECK: checkpatch reads the linker-script line "*(__rsdl_sched_class)" in
# include/asm-generic/vmlinux.lds.h as a C multiplication ("spaces preferred around that
# '*'"); every neighbouring line (*(__fair_sched_class), *(__ext_sched_class)) draws the
# same CHECK when checked as an addition.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=series
t0=$(date +%s)
LOGS=$RSDL_WORK/series-logs
[ -d "$LINUX/.git" ] || die "no kernel tree in $LINUX (scripts/prepare-tree.sh makes it)"
mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "patches/series is empty"
mkdir -p "$LOGS"
# The verdict depends only on the patches, the config fragments and these scripts: when
# none changed since a clean pass, say so instead of rebuilding every commit again.
key=$({ series_hash; cat "$REPO"/configs/*.config "$0" "$REPO/scripts/build-kernel.sh"; } |
	sha256sum | cut -d' ' -f1)
if [ "${SERIES_FORCE:-}" != 1 ] && [ -f "$LOGS/verdict" ] &&
	[ "$(sed -n 1p "$LOGS/verdict")" = "key=$key" ]; then
	sed -n '2,$p' "$LOGS/verdict" | sed "s/)\$/; unchanged since the clean pass of $(date -r "$LOGS/verdict" '+%F %T'))/"
	say "series, configs and scripts unchanged since that pass; SERIES_FORCE=1 redoes it"
	exit 0
fi
rm -f "$LOGS"/*
verdicts=$LOGS/verdict.new
echo "key=$key" >"$verdicts"

cd "$LINUX"
if ! git diff --quiet HEAD || [ "$(git rev-parse HEAD)" != "$(sed -n 's/^head=//p' .git/lab-applied)" ]; then
	echo "FAIL  series/run  ($LINUX has uncommitted changes or commits that are not in patches/:" \
		"commit and 'make export-patches', or run with SERIES=0)"
	exit 1
fi
# the branch (or commit) to come back to
orig=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
trap 'git -C "$LINUX" checkout -q "$orig"' EXIT
# the old worktree of this check, before it built in $LINUX
if [ -e "$RSDL_WORK/series-wt" ]; then
	git worktree remove --force "$RSDL_WORK/series-wt" 2>/dev/null || rm -rf "$RSDL_WORK/series-wt"
	git worktree prune
	rm -rf "$RSDL_WORK/build-series" "$RSDL_WORK/build-series.log"
fi
# 1. the commits git am made of patches/ (prepare-tree.sh; it stops when git am fails)
mapfile -t commits < <(git rev-list --reverse base..HEAD)
if [ ${#commits[@]} != ${#patches[@]} ]; then
	echo "FAIL  series/git-am  (${#patches[@]} patches, ${#commits[@]} commits in base..HEAD of $LINUX)"
	exit 1
fi
echo "PASS  series/git-am  (${#patches[@]} patches apply to pristine Linux $(git rev-parse --short base))" |
	tee -a "$verdicts"

fail=0
for i in "${!commits[@]}"; do
	c=${commits[$i]} p=${patches[$i]} n=$((i + 1))
	subject=$(git log -1 --format=%s "$c")
	# 2. checkpatch, from inside the tree (it reads MAINTAINERS, spelling.txt, ...)
	cp_log=$LOGS/checkpatch-$n.log
	# Debian's python3 first: spdxcheck.py needs the python3-ply and python3-git packages
	PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict --show-types "$REPO/patches/$p" \
		>"$cp_log" 2>&1 || true
	summary=$(grep -E '^total: ' "$cp_log" || echo "no summary")
	# every finding, except the allowed CHECK when its FILE: line is the linker script
	bad=$(awk -v allowed="CHECK:SPACING: spaces preferred around that '*' (ctx:ExV)" '
		/^(ERROR|WARNING|CHECK):/ { if (f != "") print f; f = $0; next }
		f != "" && /FILE: / {
			if (f != allowed || $0 !~ /FILE: include\/asm-generic\/vmlinux\.lds\.h:/) print f
			f = ""
		}
		END { if (f != "") print f }' "$cp_log")
	if grep -qE 'Traceback|spdxcheck' "$cp_log"; then
		bad="$bad checkpatch's spdxcheck.py did not run (python3-ply, python3-git)"
	fi
	# 3. build this commit alone
	git checkout -q --detach "$c"
	b0=$(date +%s)
	if "$REPO/scripts/build-kernel.sh" debug >"$LOGS/build-$n.log" 2>&1; then
		built="builds ($(since "$b0"))"
	else
		built="BUILD FAILED (log: $LOGS/build-$n.log, $RSDL_WORK/build-debug.log)"
		fail=1
	fi
	if [ -n "$bad" ]; then
		fail=1
		echo "FAIL  series/$(printf %04d $n)  ($subject: $built; checkpatch: $summary:" \
			"$(echo $bad | cut -c1-200))"
	else
		st=PASS
		[[ $built == builds* ]] || st=FAIL
		echo "$st  series/$(printf %04d $n)  ($subject: $built; checkpatch --strict: $summary)" |
			tee -a "$verdicts"
	fi
done
say "logs in $LOGS ($(since "$t0"))"
[ $fail = 0 ] || exit 1
mv "$verdicts" "$LOGS/verdict"
say "series clean: git am, checkpatch --strict and a build of each of the ${#patches[@]} commits"
