"""Writes the zip64 fixtures of test_pnnx_bin.cpp (run: /usr/bin/python3 make_zip64_fixtures.py).

libzip writes zip64 records only when a size or offset needs 64 bits, so the
tests cannot make small zip64 archives with it; these two tiny files are
committed instead.

* pnnx_zip64.pnnx.bin lays the bytes out the way current PNNX (ncnn
  tools/pnnx/src/storezip.cpp) does: every size in the local and central
  headers is 0xFFFFFFFF with the real value in a 28-byte zip64 extra field,
  followed by a zip64 end-of-central-directory record and locator.
* python_zip64.pnnx.bin is what Python's zipfile writes with force_zip64=True.

Both hold the attributes of operator "linear" in linear.pnnx.param:
weight = 1..6 as f32 (2x3) and bias = {-1, 0.5} as f32 (2);
kuiper/test/test_pnnx_bin.cpp expects exactly that.
The output is byte-identical on every run (fixed timestamps, sorted entries).
"""
import os
import struct
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ENTRIES = [
    ("linear.bias", struct.pack("<2f", -1.0, 0.5)),
    ("linear.weight", struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
]


def write_pnnx_style(path):
    out = bytearray()
    central = bytearray()
    for name, data in ENTRIES:
        crc = zlib.crc32(data)
        offset = len(out)
        # Local header: version 45, no flags, stored, time/date 0, sizes in the extra.
        extra = struct.pack("<HHQQQI", 0x0001, 28, len(data), len(data), 0, 0)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0, crc,
                           0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra))
        out += name.encode() + extra + data
        # Central header: sizes, offset and start disk all deferred to the extra.
        extra = struct.pack("<HHQQQI", 0x0001, 28, len(data), len(data), offset, 0)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0, crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra), 0, 0xFFFF,
                               0, 0, 0xFFFFFFFF)
        central += name.encode() + extra
    cd_offset = len(out)
    out += central
    eocd64_offset = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(ENTRIES),
                       len(ENTRIES), len(central), cd_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, eocd64_offset, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                       0xFFFFFFFF, 0)
    with open(path, "wb") as f:
        f.write(out)


def write_python_zip64(path):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name, data in ENTRIES:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=True) as f:
                f.write(data)


if __name__ == "__main__":
    write_pnnx_style(os.path.join(HERE, "pnnx_zip64.pnnx.bin"))
    write_python_zip64(os.path.join(HERE, "python_zip64.pnnx.bin"))
