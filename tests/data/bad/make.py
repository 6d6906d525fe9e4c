#!/usr/bin/env python3
"""Writes the bad-input corpus: files that must each give one clear error line, never a panic.

Run from this folder: python3 make.py (standard library only). The outputs are committed.
"""
import gzip
import struct


def nifti1(dims, datatype=2, bitpix=8, vox_offset=352.0, ndim=None, slope=1.0, inter=0.0):
    h = bytearray(352)
    struct.pack_into("<i", h, 0, 348)
    d = [ndim if ndim is not None else len(dims)] + list(dims) + [1] * (7 - len(dims))
    struct.pack_into("<8h", h, 40, *d)
    struct.pack_into("<hh", h, 70, datatype, bitpix)
    struct.pack_into("<8f", h, 76, 1, 1, 1, 1, 1, 1, 1, 1)
    struct.pack_into("<fff", h, 108, vox_offset, slope, inter)
    h[344:348] = b"n+1\0"
    return bytes(h)


def write(name, data):
    with open(name, "wb") as f:
        f.write(data)


good = nifti1([8, 8, 8]) + bytes(range(256)) * 2
write("truncated.nii.gz", gzip.compress(good)[:-40])
write("lying_dims.nii", nifti1([100, 100, 100]) + bytes(1000))
write("zero_axis.nii", nifti1([8, 0, 8]))
write("five_d.nii", nifti1([2, 2, 2, 2, 2]) + bytes(32))
write("bad_datatype.nii", nifti1([2, 2, 2], datatype=999) + bytes(8))
write("complex.nii", nifti1([2, 2, 2], datatype=32, bitpix=64) + bytes(64))
write("nan.nii", nifti1([2, 2, 2], datatype=16, bitpix=32) + struct.pack("<8f", 0, 1, float("nan"), 3, 4, 5, 6, 7))
write("inside_header_offset.nii", nifti1([2, 2], vox_offset=100.0) + bytes(4))
write("empty.nii", b"")
write("size_mismatch_8x8x8_uint16.raw", bytes(8 * 8 * 8 * 2 - 3))
write(
    "overflow_dims.nrrd",
    b"NRRD0004\ntype: uint8\ndimension: 3\nsizes: 4294967296 4294967296 4294967296\nencoding: raw\n\n" + bytes(16),
)
write(
    "inf.nrrd",
    b"NRRD0004\ntype: float\ndimension: 2\nsizes: 2 2\nendian: little\nencoding: raw\n\n"
    + struct.pack("<4f", 0, float("inf"), 1, 2),
)
write(
    "bad_gzip.nrrd",
    b"NRRD0004\ntype: uint8\ndimension: 2\nsizes: 4 4\nencoding: gzip\n\n" + b"\x1f\x8b\x08\x00garbage-not-deflate",
)
write("no_dims.mha", b"ObjectType = Image\nNDims = 3\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n" + bytes(8))
write("not_an_image.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
write("unknown.xyz", b"hello, I am not a volume\n")
