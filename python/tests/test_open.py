"""topoview.open: the command line's readers, fields and error messages."""

import numpy as np
import pytest

import topoview
from conftest import BAD, DATA, RAW, READABLE


DTYPES = {"u8": "uint8", "i8": "int8", "u16": "uint16", "i16": "int16", "u32": "uint32", "i32": "int32", "f32": "float32", "f64": "float64"}


@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
def test_open_reads_what_the_command_line_reads(path, cli, cli_json):
    vol = topoview.open(path)
    want = cli_json("ecc", path, "--backend", "cpu")
    assert list(vol.data.shape) == want["dims"]
    assert vol.data.dtype == DTYPES[want["dtype"]]
    assert list(vol.spacing) == pytest.approx(want["spacing"][: vol.data.ndim])
    assert vol.data.flags.f_contiguous
    np.testing.assert_array_equal(np.unique(vol.data), np.array(want["threshold"], dtype=vol.data.dtype))
    _, info, _ = cli("info", path)
    notes = [line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("note:")]
    assert vol.notes == notes


def test_the_same_voxels_from_three_formats():
    nifti = topoview.open(DATA / "pydicom_emri_small.nii.gz")
    raw = topoview.open(RAW[0], **RAW[1])
    tiff = topoview.open(DATA / "pydicom_emri_small_stack_uint16.tif")
    assert nifti.data.dtype == np.uint16 and nifti.data.shape == (64, 64, 10)
    np.testing.assert_array_equal(nifti.data, raw.data)
    np.testing.assert_array_equal(nifti.data, tiff.data)
    # Indexed [x, y, z], x fastest in memory: the first voxels of the raw file.
    first = np.fromfile(RAW[0], dtype="<u2", count=3)
    assert nifti.data[:3, 0, 0].tolist() == first.tolist()


def test_affine_and_notes():
    mni = topoview.open(READABLE[0])
    assert mni.affine.shape == (4, 4) and mni.affine[3].tolist() == [0, 0, 0, 1]
    horse = topoview.open(DATA / "horse_rgba.png")
    assert horse.data.ndim == 2 and any("luminance" in n for n in horse.notes), horse.notes
    assert repr(mni) == f"Volume({str(READABLE[0])!r}, 197x233x189 uint8)"


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_files_raise_the_command_lines_error(path, cli):
    code, _, err = cli("ecc", path, "--backend", "cpu")
    assert code != 0
    try:
        vol = topoview.open(path)
    except topoview.ReadError as e:
        # The command line prints "topoview: <the same message>".
        assert f"topoview: {e}" in err, (str(e), err)
        assert str(path) in str(e)
    else:
        # Readable, but not a field to compute on (NaN, infinities): the ECC says why, with
        # the keyword argument where the command line names its flag.
        with pytest.raises(topoview.TopoviewError, match='pass nan="absent"') as e:
            topoview.ecc(vol, backend="cpu")
        assert str(e.value).split(";")[0] in err, (str(e.value), err)


def test_missing_file_and_raw_options():
    with pytest.raises(topoview.ReadError, match="no_such_file.nii"):
        topoview.open("no_such_file.nii")
    with pytest.raises(topoview.TopoviewError, match="needs both dims and dtype"):
        topoview.open(RAW[0], dims=(64, 64, 10))
    with pytest.raises(topoview.TopoviewError, match="unknown dtype 'u12'"):
        topoview.open(RAW[0], dims=(64, 64, 10), dtype="u12")
    with pytest.raises(topoview.ReadError, match="needs 163840 bytes"):
        topoview.open(RAW[0], dims=(64, 64, 20), dtype="u16")
    big = topoview.open(RAW[0], dims=(64, 64, 10), dtype="u16", endian="big")
    np.testing.assert_array_equal(big.data, topoview.open(RAW[0], **RAW[1]).data.byteswap())
