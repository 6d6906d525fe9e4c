#!/usr/bin/env bash
# The Morse-Smale figures of docs/PERFORMANCE.md on one machine: per-stage times and peak
# memory at 1, 2, 4, ... threads up to every core (the bench's fields and the bundled MNI), then
# the resident memory of `topoview msc` on the MNI (no exports) at every core and at one.
#   scripts/msc-bench.sh [BIN] [OLD_BIN]
# BIN defaults to target/release/topoview; OLD_BIN, when given, is timed on the same fields
# first (all cores), for before/after ratios from one run.
set -euo pipefail
bin=${1:-target/release/topoview}
old=${2:-}
mni=assets/mni152_t1_09a.nii.gz
cores=$(nproc)
threads=1
t=2
while [ "$t" -lt "$cores" ]; do threads="$threads,$t"; t=$((t * 2)); done
[ "$cores" -gt 1 ] && threads="$threads,$cores"
echo "== $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
if [ -n "$old" ]; then
    echo "== before: $old"
    "$old" bench --msc --file "$mni" | grep -v slider
fi
echo "== $bin, threads $threads"
"$bin" bench --msc --threads "$threads" --file "$mni"
for n in "$cores" 1; do
    echo "== topoview msc $mni, $n threads"
    RAYON_NUM_THREADS=$n /usr/bin/time -v "$bin" msc "$mni" 2>&1 | grep -E "arcs;|Maximum resident|Elapsed"
    if [ -n "$old" ]; then
        RAYON_NUM_THREADS=$n /usr/bin/time -v "$old" msc "$mni" 2>&1 | grep -E "Maximum resident|Elapsed" | sed 's/^/  before: /'
    fi
done
