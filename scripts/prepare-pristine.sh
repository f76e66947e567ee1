#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Make $RSDL_WORK/pristine a git worktree of $RSDL_WORK/linux at tag base: Debian's 6.12
# without the series, the reference kernel of make soak (build-kernel.sh pristine). Files
# are only touched when the worktree is not at base already, so its build stays incremental.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=pristine
WT=$RSDL_WORK/pristine
git -C "$LINUX" rev-parse -q --verify base >/dev/null ||
	die "no tag base in $LINUX (scripts/prepare-tree.sh makes it)"
if [ ! -e "$WT/.git" ]; then
	rm -rf "$WT"
	git -C "$LINUX" worktree prune
	git -C "$LINUX" worktree add -q --detach "$WT" base
	say "created $WT at base"
fi
cd "$WT"
if [ "$(git rev-parse HEAD)" != "$(git rev-parse base)" ] || [ -n "$(git status --porcelain)" ]; then
	git checkout -q -f --detach base
	git clean -q -fdx
	say "reset $WT to base"
fi
say "$WT: $(git log -1 --format='%h %s' HEAD)"
