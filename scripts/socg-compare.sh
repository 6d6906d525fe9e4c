#!/usr/bin/env bash
# Side by side with the SoCG 2022 GPU ECC code (github.com/TopoXLab/GPU_ECC_SoCG2022, its
# sources/ directory), built on the GPU machine with its own makefile, on the same random
# 256-level fields: topoview reads them as u8, the SoCG tool (float32 input only) as the same
# values in f32. Prints, per case, the kernel time by Nsight Compute at the GPU's own clocks
# (all launches summed; topoview's field in one slab), file to curve, and whether the curves
# agree (the SoCG tool writes the thresholds where chi changes, chi as a float).
#   scripts/socg-compare.sh SOCG_SOURCES [BIN]   (on the GPU machine, from the repository root;
#   BIN holds the topoview binary, default .devbin)
set -euo pipefail
src=$1
bin=${2:-.devbin}
nvcc=$(command -v nvcc)
build=/tmp/socg-build
rm -rf "$build" && cp -r "$src" "$build"
(cd "$build" && make -s CUDA_HOME="$(dirname "$(dirname "$nvcc")")" GENCODE="-gencode arch=compute_90,code=sm_90" >/dev/null 2>&1)
socg=$build/build/GPU_ECC
kernel_us() { # regex, command...: the summed duration of the matching kernels, in microseconds
    local re=$1
    shift
    ncu --clock-control none --metrics gpu__time_duration.sum -k "regex:$re" "$@" 2>/dev/null |
        awk '$1 == "gpu__time_duration.sum" { v = $3; gsub(",", "", v); if ($2 == "ms") v *= 1000; if ($2 == "s") v *= 1e6; if ($2 == "ns") v /= 1000; t += v; n++ }
             END { printf "%.1f us (%d launches)", t, n; exit n == 0 }' ||
        { echo "no kernel matching $re ran" >&2; exit 1; }
}
seconds() { # command...: wall seconds
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    python3 -c "print(f'{$t1 - $t0:.3f}')"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
printf "%-10s | %-32s | %-32s | %-22s | %s\n" case "topoview kernel" "SoCG kernel" "file to curve (s)" curves
for dims in 512x512x512 1024x1024x1024 8192x8192; do
    u8=/tmp/noise_${dims}_uint8.raw
    f32=/tmp/noise_${dims}_float32.dat
    python3 - "$dims" "$u8" "$f32" <<'PY'
import sys, numpy as np
dims = [int(d) for d in sys.argv[1].split("x")][::-1]
v = np.random.default_rng(2).integers(0, 256, size=dims, dtype=np.uint8)
v.tofile(sys.argv[2])
v.astype(np.float32).tofile(sys.argv[3])
PY
    IFS=x read -r w h d <<<"$dims"
    d=${d:-0}
    cat "$u8" "$f32" >/dev/null # page-cached for both tools
    ours=$(kernel_us packed "$bin/topoview" ecc "$u8" --backend cuda --gpu-memory 4G)
    theirs=$(kernel_us ECC_kernel "$socg" s "$f32" /tmp/socg.txt "$h" "$w" "$d")
    t_ours=$(seconds "$bin/topoview" ecc "$u8" --backend cuda)
    t_theirs=$(seconds "$socg" s "$f32" /tmp/socg.txt "$h" "$w" "$d")
    for c in top-cells vertices; do
        "$bin/topoview" ecc "$u8" --backend cuda --construction $c --csv /tmp/ours-$c.csv >/dev/null
    done
    agree=$(python3 - <<'PY'
import numpy as np
theirs = np.loadtxt("/tmp/socg.txt", ndmin=2)
out = []
for c in ["top-cells", "vertices"]:
    rows = [l.split(",") for l in open(f"/tmp/ours-{c}.csv") if l[0].isdigit() or l[0] == "-"]
    ours = {float(t): int(x) for t, x in rows}
    # The SoCG tool lists the thresholds where chi changes, chi printed with 6 significant
    # digits: both ways, ours where chi changes must be its thresholds, and its chi ours.
    changes, last = set(), 0
    for t in sorted(ours):
        if ours[t] != last:
            changes.add(t)
        last = ours[t]
    same_steps = changes == {float(t) for t, _ in theirs}
    err = max(abs(ours.get(float(t), np.inf) - x) / max(1.0, abs(x)) for t, x in theirs)
    ok = same_steps and err < 5e-6
    out.append(f"{c}: {'equal' if ok else 'DIFFERENT'} (same steps: {same_steps}, max rel. diff {err:.1e})")
print(f"at its {len(theirs)} thresholds, " + "; ".join(out))
PY
)
    printf "%-10s | %-32s | %-32s | %-22s | %s\n" "$dims" "$ours" "$theirs" "$t_ours vs $t_theirs" "$agree"
    rm -f "$u8" "$f32"
done
