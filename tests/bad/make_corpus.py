#!/usr/bin/env python3
"""Regenerates the broken inputs in tests/bad/ (run after a native format change).

    python3 tests/bad/make_corpus.py   # from the repository root, after cargo build --release

Native cases are made by damaging a good .nst written by numasim from
tests/data/hello.lackey; text cases are written literally.
"""
import gzip
import struct
import subprocess
import tempfile
from pathlib import Path

root = Path(__file__).resolve().parents[2]
d = root / "tests" / "bad"
lackey = root / "tests" / "data" / "hello.lackey"

with tempfile.TemporaryDirectory() as t:
    good = Path(t) / "good.nst"
    subprocess.run([str(root / "target/release/numasim"), "trace", "convert", str(lackey), str(good)], check=True)
    ok = good.read_bytes()

meta_len = struct.unpack_from("<I", ok, 24)[0]
payload = 32 + meta_len + 24  # first block's payload offset

(d / "wrong_magic.nst").write_bytes(b"NUMASIMX" + ok[8:])
b = bytearray(ok); b[8] = 7; (d / "future_version.nst").write_bytes(bytes(b))
(d / "truncated_block.nst").write_bytes(ok[: payload + 1005])
b = bytearray(ok); b[payload + 777] ^= 0x10; (d / "flipped_byte.nst").write_bytes(bytes(b))
(d / "trailing_junk.nst").write_bytes(ok + b"junk")

(d / "empty.lackey").write_bytes(b"")
(d / "bad_hex.lackey").write_text("==1== Lackey\nI  04017a0,3\n L 1ffefffd3g,8\n")
(d / "unknown_op.lackey").write_text("I  04017a0,3\n X 1ffefffd38,8\n")
(d / "garbage_line.lackey").write_text("I  04017a0,3\nhello world\n")
(d / "unknown_op.csv").write_text("thread,op,addr,size\n0,load,0x1000,8\n0,jump,0x1008,8\n")
(d / "zero_size.csv").write_text("thread,op,addr,size\n0,load,0x1000,8\n1,store,0x2000,0\n")
(d / "bad_field.mldpc").write_text(
    "*** ChampSim\n3, 1, 7f2d5bd0ae68, 7f2d5b9e8093, 0\n4, 2, 7f2d5bd0ae70, 7f2d5b9e8093, 7\n"
)
(d / "missing_column.csv").write_text("thread,op,size\n0,load,8\n")
(d / "bad_number.csv").write_text("thread,op,addr,size\n0,load,0x1000,eight\n")
(d / "bad_label.din").write_text("2 0\n0 1000\n9 2000\n")
# ChampSim: two whole 64-byte instructions and 40 stray bytes.
rec = struct.pack("<QBB2B4B2Q4Q", 0x400000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1000, 0, 0, 0)
assert len(rec) == 64
(d / "truncated.champsimtrace").write_bytes(rec * 2 + b"\x01" * 40)
(d / "truncated_gzip.lackey.gz").write_bytes(gzip.compress(lackey.read_bytes(), mtime=0)[:3000])
print("corpus written to", d)
