#!/usr/bin/env python3
"""Writes crates/viewer/src/render/colormap_tables.rs: 256-entry RGB tables of the viewer's colormaps, taken
from matplotlib (viridis, magma, inferno: CC0, by Nathaniel Smith and Stefan van der Walt;
coolwarm: Kenneth Moreland's diverging map). Run from the repository root:
    python3 scripts/colormaps.py
"""
import matplotlib
import numpy as np

MAPS = ["viridis", "magma", "inferno", "coolwarm"]
out = [
    "//! 256-entry RGB colormap tables, written by scripts/colormaps.py from matplotlib "
    + matplotlib.__version__ + ".",
    "//! Do not edit by hand.",
    "",
]
for name in MAPS:
    rgb = np.round(matplotlib.colormaps[name](np.linspace(0, 1, 256))[:, :3] * 255).astype(int)
    out.append(f"pub const {name.upper()}: [[u8; 3]; 256] = [")
    for i in range(0, 256, 8):
        out.append("    " + " ".join(f"[{r}, {g}, {b}]," for r, g, b in rgb[i : i + 8]))
    out.append("];")
    out.append("")
open("crates/viewer/src/render/colormap_tables.rs", "w").write("\n".join(out))
