#!/usr/bin/env bash
# demo-publish.sh RESULTS_DIR DEST: copy a make demo results directory into the repository
# (docs/results/<date>-full/): report.md, plots/, csv/ (frames.csv gzipped), setup.txt and each
# boot's verdict and RSDL boot line; the boots' full console logs stay out (size).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
STAGE=publish
src=${1:?usage: demo-publish.sh RESULTS_DIR DEST} dst=${2:?usage: demo-publish.sh RESULTS_DIR DEST}
[ -f "$src/report.md" ] || die "no report.md in $src"
mkdir -p "$dst/csv" "$dst/plots"
cp "$src/report.md" "$src/setup.txt" "$dst/"
cp "$src"/plots/*.png "$dst/plots/"
for f in "$src"/csv/*.csv; do
	case $f in
	*/frames.csv) gzip -9 -n -c "$f" >"$dst/csv/frames.csv.gz" ;;
	*) cp "$f" "$dst/csv/" ;;
	esac
done
sed -i 's#`csv/\*.csv` (frames.csv: every frame of every run#`csv/*.csv` (csv/frames.csv.gz: every frame of every run#' "$dst/report.md"
for b in "$src"/raw/rep* "$src"/raw-smp/rep*; do
	[ -d "$b" ] || continue
	echo "== $(basename "$(dirname "$b")")/$(basename "$b"): $(cat "$b/wall-seconds" 2>/dev/null || echo '?') s wall, QEMU status $(cat "$b/qemu-status")"
	tr -d '\r' <"$b/console.log" | grep -E 'Command line:|sched: RSDL' || true
	cat "$b/verdict"
done >"$dst/boots.txt"
say "copied to $dst: $(du -sh "$dst" | cut -f1)"
