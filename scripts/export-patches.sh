#!/usr/bin/env bash
# Write the commits base..HEAD of $RSDL_WORK/linux to patches/*.patch and patches/series.
# This is how the series is developed: edit and commit in $RSDL_WORK/linux, then export.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=export
[ -d "$LINUX/.git" ] || die "no kernel tree in $LINUX (run make tree first)"
cd "$LINUX"
git diff --quiet HEAD || say "warning: uncommitted changes in $LINUX are not exported"
mkdir -p "$REPO/patches"
rm -f "$REPO"/patches/*.patch
git format-patch -q --zero-commit --no-signature --cover-letter -o "$REPO/patches" base..HEAD
# The cover letter (0000) takes its subject and text from patches/cover-letter.txt; it is
# for reviewers and mail, not for git am, so patches/series leaves it out.
cover=$REPO/patches/0000-cover-letter.patch
python3 - "$cover" "$REPO/patches/cover-letter.txt" <<'PY'
import sys
patch, text = open(sys.argv[1]).read(), open(sys.argv[2]).read().rstrip('\n')
subject, _, blurb = text.partition('\n\n')
patch = patch.replace('*** SUBJECT HERE ***', subject.strip(), 1)
open(sys.argv[1], 'w').write(patch.replace('*** BLURB HERE ***', blurb, 1))
PY
(cd "$REPO/patches" && ls -1 -- *.patch 2>/dev/null | grep -vx '0000-cover-letter.patch' || true) \
	>"$REPO/patches/series"
n=$(wc -l <"$REPO/patches/series")
# The tree already is base + this series: record it so the next build does not re-apply.
printf 'series=%s\nhead=%s\n' "$(series_hash)" "$(git rev-parse HEAD)" >.git/lab-applied
say "exported $n patches (base..$(git rev-parse --short HEAD)) to patches/, series updated"
