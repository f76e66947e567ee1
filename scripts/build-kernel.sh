#!/usr/bin/env bash
# build-kernel.sh debug|perf|soak|pristine — configure (when the fragments changed) and build
# the bzImage of one flavour from $RSDL_WORK/linux into $RSDL_WORK/build-<flavour>.
#   debug:    tinyconfig + base + debug + rsdl         (make check, make boot)
#   perf:     tinyconfig + base + rsdl                 (make demo)
#   soak:     tinyconfig + base + debug + rsdl + soak  (make soak: KASAN, UBSAN)
#   pristine: tinyconfig + base + debug + soak, from the pristine worktree
#             $RSDL_WORK/pristine (scripts/prepare-pristine.sh; tag base, no series), the
#             reference column of make soak
# Prints one progress line every 30 s; the full log is $RSDL_WORK/build-<flavour>.log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavour=${1:?usage: build-kernel.sh debug|perf|soak|pristine}
case $flavour in
debug) fragments=(base debug rsdl) ;;
perf) fragments=(base rsdl) ;;
soak) fragments=(base debug rsdl soak) ;;
pristine) fragments=(base debug soak) LINUX=$RSDL_WORK/pristine ;;
*) die "unknown flavour $flavour (debug, perf, soak or pristine)" ;;
esac
STAGE=kernel-$flavour
B=$RSDL_WORK/build-$flavour
LOG=$B.log
frags=("${fragments[@]/#/$REPO/configs/}")
frags=("${frags[@]/%/.config}")
# LOCALVERSION= (empty): no "+" suffix for the git tree in the release string
kmake=(make -C "$LINUX" O="$B" CC="ccache gcc" LOCALVERSION= -j"$(nproc)")
[ -e "$LINUX/.git" ] || die "no kernel tree in $LINUX (scripts/prepare-tree.sh makes it)"
mkdir -p "$B" "$CCACHE_DIR"
t0=$(date +%s)

# The config depends on the fragments and on the Kconfig files of the tree (a series that
# adds CONFIG_SCHED_RSDL must get it switched on).
config_inputs_hash() {
	{
		cat "${frags[@]}"
		cd "$LINUX" && git ls-files -z -- 'Kconfig*' '*/Kconfig*' | xargs -0 cat
	} | sha256sum | cut -d' ' -f1
}

# Is CONFIG_$1 defined by some Kconfig file of this tree?
kconfig_defines() {
	grep -rqsE --include='Kconfig*' "^[[:space:]]*(menu)?config $1[[:space:]]*$" "$LINUX"
}

# Check that every option of the fragments ended up as asked. Options the tree does not
# define (CONFIG_SCHED_RSDL on a pristine tree) are reported and ignored.
verify_config() {
	local line sym want got bad=0
	while read -r line; do
		case $line in
		CONFIG_*=*) sym=${line%%=*} want=${line#*=} ;;
		"# CONFIG_"*" is not set") sym=${line#\# } sym=${sym%% *} want=n ;;
		*) continue ;;
		esac
		got=$(sed -n "s/^$sym=//p" "$B/.config")
		[ -n "$got" ] || got=n
		[ "$got" = "$want" ] && continue
		if ! kconfig_defines "${sym#CONFIG_}"; then
			say "note: $sym is not defined in this tree (not in the series yet?), ignored"
		elif [[ $sym == *_KUNIT_TEST && $(grep -c '^CONFIG_KUNIT=y' "$B/.config") == 0 ]]; then
			: # KUnit tests exist only in the debug flavour
		else
			say "ERROR: $sym=$want was asked for, but .config has $sym=$got"
			bad=1
		fi
	done < <(cat "${frags[@]}")
	[ $bad = 0 ] || die "the config of $B lacks options the lab needs (dependencies? see above)"
}

configure() {
	say "configuring: tinyconfig + ${fragments[*]}"
	{
		"${kmake[@]}" tinyconfig
		KCONFIG_CONFIG="$B/.config" "$LINUX/scripts/kconfig/merge_config.sh" -m -O "$B" \
			"$B/.config" "${frags[@]}"
		"${kmake[@]}" olddefconfig
	} >"$B/config.log" 2>&1 || { tail -n 30 "$B/config.log"; die "configuration failed"; }
	verify_config
	echo "$1" >"$B/.lab-config-inputs"
}

want=$(config_inputs_hash)
if [ ! -f "$B/.config" ] || [ "$want" != "$(cat "$B/.lab-config-inputs" 2>/dev/null)" ]; then
	configure "$want"
else
	say "config up to date"
fi

say "building bzImage in $B (log: $LOG)"
"${kmake[@]}" bzImage >"$LOG" 2>&1 &
pid=$!
last=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
	sleep 2
	if [ $(($(date +%s) - last)) -ge 30 ]; then
		last=$(date +%s)
		say "$(since "$t0"): $(grep -c '^  CC ' "$LOG" || true) CC lines, last: $(tail -n 1 "$LOG" | cut -c1-70)"
	fi
done
if ! wait "$pid"; then
	echo "----- tail of $LOG -----"
	tail -n 40 "$LOG"
	echo "----- errors -----"
	grep -E 'error:|Error [0-9]' "$LOG" | head -n 20 || true
	die "kernel build failed after $(since "$t0")"
fi
cc=$(grep -c '^  CC ' "$LOG" || true)
rsdl=$(grep -q '^CONFIG_SCHED_RSDL=y' "$B/.config" && echo "with RSDL" || echo "no CONFIG_SCHED_RSDL")
say "done in $(since "$t0"): $cc files compiled, $(grep -c '^  LD ' "$LOG" || true) LD, $rsdl, $B/arch/x86/boot/bzImage"
