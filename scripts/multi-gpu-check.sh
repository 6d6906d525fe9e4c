#!/usr/bin/env bash
# The ECC shared among every GPU of a host (`--gpus`), on a machine with two or more NVIDIA
# GPUs, from binaries built elsewhere (see scripts/gpu-check.sh): all device tests against the
# CPU, then 1 vs all GPUs in process (1024^3 u8 from host memory and streamed from a file),
# through the command line, and on a sparse file larger than one GPU's memory.
#   scripts/multi-gpu-check.sh [.devbin] [GiB of the large file, default 150; 0: none]
# scripts/transfer_ceilings.py measures the host-side ceilings these runs meet.
set -uo pipefail
bin=${1:-.devbin}
big_gib=${2:-150}
if [ ! -e /work/main/tests/data ]; then mkdir -p /work && ln -sfn "$PWD" /work/main; fi
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
echo "$(nproc) cores; $(free -g | awk '/Mem/ {print $2}') GiB memory"
echo "== CUDA tests (against the CPU reference)"
"$bin/tests" --nocapture --test-threads=1 cuda:: 2>&1 |
    grep -E "^test |CUDA device|devices:|CUDA: |equal to|skipped|panicked|test result" | sort | uniq -c
u8=/tmp/noise_1024x1024x1024_uint8.raw
python3 -c "import numpy as np; np.random.default_rng(2).integers(0,256,size=(1024,)*3,dtype=np.uint8).tofile('$u8')"
cat "$u8" >/dev/null # page-cached
echo "== 1 vs all GPUs in process"
"$bin/topoview" bench --gpus --repeat 5 --file "$u8"
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f "  %e s wall, max RSS %M KiB")
for g in 1 all; do
    echo "== topoview ecc $(basename "$u8") --gpus $g (3 runs)"
    for _ in 1 2 3; do
        "${timer[@]}" "$bin/topoview" ecc "$u8" --backend cuda --gpus "$g" 2>&1 | sed 's/; chi from.*;/; .../'
    done
done
[ "$big_gib" -gt 0 ] || exit 0
# Larger than one GPU's memory: a sparse file (the disk is smaller than the file) of zeros with
# 64 MiB of noise every 8 GiB, so the curve is not that of a constant field.
planes=$(( big_gib * 64 ))
big=/tmp/sparse_4096x4096x${planes}_uint8.raw
python3 - "$big" "$planes" <<'PY'
import sys, numpy as np
path, planes = sys.argv[1], int(sys.argv[2])
size = 4096 * 4096 * planes
rng = np.random.default_rng(5)
with open(path, "wb") as f:
    f.truncate(size)
    for at in range(0, size - (64 << 20), 8 << 30):
        f.seek(at)
        f.write(rng.integers(0, 256, size=64 << 20, dtype=np.uint8).tobytes())
PY
ls -ls "$big"
# Page-cached first (the machine's memory holds it), so that each run reads it at the same
# rate: the first read of a sparse file fills the cache at a few GB/s.
/usr/bin/time -f "  first read into the page cache: %e s" cat "$big" >/dev/null
for g in 1 all 1; do
    echo "== topoview ecc $(basename "$big") --gpus $g"
    "${timer[@]}" "$bin/topoview" ecc "$big" --backend cuda --gpus "$g" 2>&1 | sed 's/; chi from.*;/; .../'
done
rm -f "$big"
