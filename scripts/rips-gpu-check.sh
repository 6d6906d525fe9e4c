#!/usr/bin/env bash
# Rips persistence on a machine with an NVIDIA GPU, from binaries built elsewhere (see
# scripts/gpu-check.sh): the device tests against the CPU, then `topoview rips` on the standard
# sets with the apparent pairs and listings on the GPU and all on the CPU, then ripser.py and giotto-ph on
# the same sets (their wheels installed beforehand; PYTHONPATH set).
#   scripts/rips-gpu-check.sh [.devbin]
set -uo pipefail
bin=${1:-.devbin}
if [ ! -e /work/main/tests/data ]; then mkdir -p /work && ln -sfn "$PWD" /work/main; fi
echo "== Rips device test (apparent pairs and listings against the CPU's)"
"$bin/tests" --nocapture --test-threads=1 cuda::rips 2>&1 | grep -E "^test |CUDA device|compared|skipped|panicked|test result"
echo "== topoview rips: apparent pairs and listings on the GPU (cuda), all on $(nproc) CPU threads (cpu)"
d=tests/data/rips
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f "  max RSS %M KiB")
for set in "$d/sphere_3_192.lower_distance_matrix --maxdim 2" "$d/celegans.distance_matrix --maxdim 2" \
    "$d/cyclooctane.csv --maxdim 1 --threshold 0.5" "$d/o3_4096.point_cloud --maxdim 2 --threshold 1.4"; do
    # The first run of each backend with its stages (TOPOVIEW_RIPS_STAGES), then two plain.
    for b in cuda cpu; do
        # shellcheck disable=SC2086
        TOPOVIEW_RIPS_STAGES=1 "${timer[@]}" "$bin/topoview" rips $set --backend $b 2>&1
    done
    for _ in 1 2; do
        for b in cuda cpu; do
            # shellcheck disable=SC2086
            "$bin/topoview" rips $set --backend $b 2>&1
        done
    done
done
echo "== peers: ripser.py (one thread) and giotto-ph ($(nproc) threads)"
python3 scripts/rips_peers.py "$(nproc)"
