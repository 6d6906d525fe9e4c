#!/usr/bin/env bash
# `topoview ecc` reading files a slab at a time, on a machine with an NVIDIA GPU, from binaries
# built elsewhere (see scripts/gpu-check.sh): the streamed-file device test against the CPU,
# then file-to-curve wall time and peak memory through the command line, page-cached, on the
# GPU and on all CPU cores.
#   scripts/stream-gpu-check.sh [.devbin]
set -uo pipefail
bin=${1:-.devbin}
if [ ! -e /work/main/tests/data ]; then mkdir -p /work && ln -sfn "$PWD" /work/main; fi
echo "== streamed files on the device against the CPU"
"$bin/tests" --nocapture --test-threads=1 cuda::files_stream 2>&1 | grep -E "^test |CUDA device|equal to|skipped|panicked|test result"
u8=/tmp/noise_1024x1024x1024_uint8.raw
f32=/tmp/distinct_512x512x512_float32.raw
python3 - "$u8" "$f32" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(2)
rng.integers(0, 256, size=(1024,) * 3, dtype=np.uint8).tofile(sys.argv[1])
(rng.permutation(512 ** 3).astype(np.float32) / 7).tofile(sys.argv[2])
PY
cat "$u8" "$f32" >/dev/null
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f "  %e s wall, max RSS %M KiB")
for f in "$u8" "$f32"; do
    for b in cuda cpu; do
        echo "== topoview ecc $(basename "$f") --backend $b (3 runs)"
        for _ in 1 2 3; do
            "${timer[@]}" "$bin/topoview" ecc "$f" --backend "$b" 2>&1 | sed 's/; chi from.*;/; .../'
        done
    done
done
