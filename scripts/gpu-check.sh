#!/usr/bin/env bash
# Runs the CUDA tests and benchmarks on a machine with an NVIDIA GPU, from binaries built
# elsewhere (the GPU machine has no Rust toolchain):
#   cargo build --release && cargo test --release --no-run --test it
#   mkdir -p .devbin && cp target/release/topoview .devbin/ && cp target/release/deps/it-<hash> .devbin/tests
#   scripts/gpu-check.sh [.devbin]        (on the GPU machine, from the repository root)
# Prints the device, the test summary and the benchmark table last.
set -uo pipefail
bin=${1:-.devbin}
# The test binaries find tests/data through the path they were built in.
if [ ! -e /work/main/tests/data ]; then mkdir -p /work && ln -sfn "$PWD" /work/main; fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "== CUDA tests (against the CPU reference)"
"$bin/tests" --nocapture --test-threads=1 cuda:: 2>&1 | grep -E "^test |CUDA device|equal to|skipped|panicked|test result" | sort | uniq -c
echo "== benchmark"
raw=/tmp/noise_1024x1024x1024_uint8.raw
python3 -c "import numpy as np; np.random.default_rng(2).integers(0,256,size=(1024,)*3,dtype=np.uint8).tofile('$raw')"
cat "$raw" >/dev/null # page-cached, as the benchmark promises
"$bin/topoview" bench --cuda --repeat 5 --file "$raw" --gpu-memory 256M
echo "== the CLI on the bundled volume (backend auto)"
"$bin/topoview" ecc assets/mni152_t1_09a.nii.gz
"$bin/topoview" ecc assets/mni152_t1_09a.nii.gz --backend cpu
echo "== crack filter (inter-pixel filtering)"
"$bin/topoview" bench --cracks --repeat 5
"$bin/topoview" cracks assets/coins.png
"$bin/topoview" cracks assets/coins.png --backend cpu
