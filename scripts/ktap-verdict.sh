#!/usr/bin/env bash
# ktap-verdict.sh [-n BOOT] KTAP_FILE CONSOLE_LOG QEMU_STATUS
# Judge one boot: one line per test ("PASS  BOOT/name" or "FAIL  BOOT/name  (reason)"),
# then BOOT/run (plan complete, guest status, timeout), BOOT/kunit:<suite> for KUnit
# results on the console, and BOOT/console (no kernel splats; the matching lines follow).
# A SKIP is a failure. Last line: "BOOT: N passed, N failed"; exit status 1 on any failure.
set -euo pipefail
boot=boot
if [ "${1:-}" = -n ]; then
	boot=$2
	shift 2
fi
[ $# = 3 ] || { sed -n '2,6p' "$0"; exit 2; }
ktap=$1 console=$2 qemu_status=$3

# Kernel reports that fail a boot (extended regular expressions, one per line)
SPLATS='WARNING:
BUG:
kernel BUG at
Oops
general protection fault
possible circular locking dependency
inconsistent lock state
possible recursive locking
suspicious RCU usage
INFO: possible irq lock inversion
rcu: INFO: rcu_.* (self-)?detected stall
INFO: task .* blocked for more than
soft lockup
hard LOCKUP
KASAN:
UBSAN:
Kernel panic'

case $qemu_status in
124 | 137) guest="timeout" ;;
0) guest="no status (guest panicked, rebooted or powered off)" ;;
*) if [ $((qemu_status % 2)) = 1 ]; then guest=$((qemu_status >> 1)); else guest="QEMU error $qemu_status"; fi ;;
esac

{
	# The guest's KTAP stream: top-level results, nested output indented
	tr -d '\r' <"$ktap" 2>/dev/null | awk -v boot="$boot" -v guest="$guest" '
	function finish_test(line, ok, name, directive, reason) {
		if (ok && directive ~ /^SKIP/) { ok = 0; reason = "skipped: " directive }
		else if (!ok) reason = directive
		if (ok && nested_bad != "") { ok = 0; reason = "exit 0 but " nested_bad }
		else if (!ok && nested_bad != "") reason = reason "; " nested_bad
		if (ok) { printf "PASS  %s/%s\n", boot, name; passed++ }
		else { printf "FAIL  %s/%s  (%s)\n", boot, name, reason; failed++ }
		nested_bad = ""
	}
	/^(K)?TAP version/ { header = 1; next }
	/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; planned = 1; next }
	/^(not )?ok [0-9]+/ {
		ok = ($1 == "ok")
		rest = $0; sub(/^(not )?ok [0-9]+ ?(- )?/, "", rest)
		name = rest; directive = ""
		if ((i = index(rest, " # ")) > 0) {
			name = substr(rest, 1, i - 1); directive = substr(rest, i + 3)
		}
		results++
		finish_test($0, ok, name, directive)
		next
	}
	/^[ \t]+not ok [0-9]+/ {
		t = $0; sub(/^[ \t]+not ok [0-9]+ ?(- )?/, "", t)
		nested_bad = nested_bad (nested_bad == "" ? "failed: " : ", ") t
		next
	}
	/^[ \t]+ok [0-9]+ .*# SKIP/ {
		t = $0; sub(/^[ \t]+ok [0-9]+ ?(- )?/, "", t)
		nested_bad = nested_bad (nested_bad == "" ? "" : ", ") "skipped: " t
		next
	}
	END {
		why = ""
		if (!header) why = why "; no TAP version line"
		if (!planned) why = why "; no plan"
		else if (plan == 0) why = why "; empty plan 1..0: nothing was tested"
		else if (results < plan) why = why sprintf("; short: plan 1..%d but %d results", plan, results)
		else if (results > plan) why = why sprintf("; plan 1..%d but %d results", plan, results)
		if (guest == "timeout") why = why "; TIMEOUT"
		else if (guest !~ /^[0-9]+$/) why = why "; " guest
		else if (guest != 0 && failed == 0) why = why "; guest status " guest " but no test failed"
		else if (guest == 0 && failed > 0) why = why "; guest status 0 but tests failed"
		if (why == "") printf "PASS  %s/run  (plan 1..%d complete, guest status %s)\n", boot, plan, guest
		else printf "FAIL  %s/run  (%s)\n", boot, substr(why, 3)
	}'

	# KUnit results the kernel printed on the console: top-level suite lines
	tr -d '\r' <"$console" 2>/dev/null | awk -v boot="$boot" '
	/^\[[ 0-9.]+\] (not )?ok [0-9]+ / {
		line = $0; sub(/^\[[ 0-9.]+\] /, "", line)
		ok = (line ~ /^ok/); skip = (line ~ /# SKIP/)
		sub(/^(not )?ok [0-9]+ ?(- )?/, "", line)
		if (ok && !skip) printf "PASS  %s/kunit:%s\n", boot, line
		else printf "FAIL  %s/kunit:%s  (%s)\n", boot, line, skip ? "skipped" : "KUnit suite failed"
	}'

	# Kernel splats on the console
	if [ ! -s "$console" ]; then
		echo "FAIL  $boot/console  (console log missing or empty: $console)"
	elif hits=$(tr -d '\r' <"$console" | grep -n -E -f <(echo "$SPLATS")); then
		echo "FAIL  $boot/console  ($(echo "$hits" | wc -l) splat lines in $console)"
		echo "$hits" | head -n 20 | sed 's/^/        /'
	else
		echo "PASS  $boot/console  (no splats)"
	fi
} | awk -v boot="$boot" '
	{ print }
	/^PASS  / { p++ }
	/^FAIL  / { f++ }
	END { printf "%s: %d passed, %d failed\n", boot, p, f; exit f > 0 }'
