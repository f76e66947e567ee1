#!/usr/bin/env bash
# check-series.sh — what a maintainer checks before taking patches/:
#   1. git am of the whole series onto pristine Linux (tag base) succeeds;
#   2. scripts/checkpatch.pl --strict on every patch: no ERROR, no WARNING, and no CHECK
#      except the one known false positive below;
#   3. every commit of the series builds on its own (bzImage, the debug flavour's config,
#      so the KUnit patch is compiled too).
# It works in its own worktree ($RSDL_WORK/series-wt) and build directory
# ($RSDL_WORK/build-series), so the lab's tree and kernels stay as they are. Rebuilds are
# incremental: between two commits kbuild recompiles what changed, ccache the rest.
#
# The allowed CHECK: checkpatch reads the linker-script line "*(__rsdl_sched_class)" in
# include/asm-generic/vmlinux.lds.h as a C multiplication ("spaces preferred around that
# '*'"); every neighbouring line (*(__fair_sched_class), *(__ext_sched_class)) draws the
# same CHECK when checked as an addition.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=series
t0=$(date +%s)
WT=$RSDL_WORK/series-wt
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

if [ ! -d "$WT/.git" ] && [ ! -f "$WT/.git" ]; then
	rm -rf "$WT"
	git -C "$LINUX" worktree prune
	git -C "$LINUX" worktree add -q --detach "$WT" base
fi
cd "$WT"
[ -d "$(git rev-parse --git-dir)/rebase-apply" ] && git am --abort
git checkout -q -f --detach base
# 1. git am onto pristine base (as a user would: committer identity from the lab)
if ! git -c user.name="RSDL lab" -c user.email=lab@localhost am -q \
	"${patches[@]/#/$REPO/patches/}" >"$LOGS/git-am.log" 2>&1; then
	cat "$LOGS/git-am.log"
	git am --abort || true
	echo "FAIL  series/git-am  (patches/ does not apply to pristine Linux; $LOGS/git-am.log)"
	exit 1
fi
mapfile -t commits < <(git rev-list --reverse base..HEAD)
[ ${#commits[@]} = ${#patches[@]} ] || die "${#patches[@]} patches gave ${#commits[@]} commits"
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
	if LAB_TREE=$WT LAB_BUILD=$RSDL_WORK/build-series "$REPO/scripts/build-kernel.sh" debug \
		>"$LOGS/build-$n.log" 2>&1; then
		built="builds ($(since "$b0"))"
	else
		built="BUILD FAILED (log: $LOGS/build-$n.log, $RSDL_WORK/build-series.log)"
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
git checkout -q --detach "${commits[-1]}"
say "logs in $LOGS ($(since "$t0"))"
[ $fail = 0 ] || exit 1
mv "$verdicts" "$LOGS/verdict"
say "series clean: git am, checkpatch --strict and a build of each of the ${#patches[@]} commits"
