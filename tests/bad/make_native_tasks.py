#!/usr/bin/env python3
"""Writes the bad native task traces under tests/bad/tasks/ and the native
traces with times past the horizon under tests/bad/ (run from the
repository root). Independent of numasim's writer: the layout is built from
docs/trace-format.md, so the files also check the spec and the reader agree."""
import json, struct

def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

TASK, TIME, GAP = 8, 4, 2

def rec(addr, thread, size, kind, flags, time):
    return (addr, thread, size, kind, flags, time)

def begin(tid, key, at):
    return rec(key, tid, 1, 0, TASK | TIME, at)

def end(tid):
    return rec(0, tid, 1, 1, TASK, 0)

def load(tid, addr, gap):
    return rec(addr, tid, 8, 0, GAP, gap)

def native(records, trailer=True, fields=2 | 4, version=2):
    meta = json.dumps({"source": "tests/bad/make_native_tasks.py"}).encode()
    head = bytearray(32)
    head[0:8] = b"NUMASIMT"
    struct.pack_into("<HHI", head, 8, version, 24, fields)
    struct.pack_into("<II", head, 20, 65536, len(meta))
    struct.pack_into("<I", head, 28, crc32c(bytes(head[:28]) + meta))
    out = bytes(head) + meta
    cores = b"".join(struct.pack("<QIHBB", a, t, s, k, f) for a, t, s, k, f, _ in records)
    times = b"".join(struct.pack("<Q", r[5]) for r in records)
    payload = cores + times
    out += b"NSTB" + struct.pack("<III", len(records), len(payload), 0)
    out += struct.pack("<II", crc32c(payload), 0) + payload
    if trailer:
        p = struct.pack("<Q", len(records))
        out += b"NSTE" + struct.pack("<III", 0, 8, 0) + struct.pack("<II", crc32c(p), 0) + p
    return out

files = {
    "native-access-outside-task.nst": native([begin(0, 1, 10), end(0), load(0, 64, 1)]),
    "native-arrival-backwards.nst": native([begin(0, 2, 90), end(0), begin(1, 2, 50), end(1)]),
    "native-marker-bad-kind.nst": native([begin(0, 1, 10), rec(0, 0, 1, 2, TASK, 0)]),
    "native-no-end.nst": native([begin(0, 1, 10), load(0, 64, 1)]),
    "native-no-trailer.nst": native([begin(0, 1, 10), end(0)], trailer=False),
    "native-tasks-without-time.nst": native([], fields=4),
    # The time horizon is 2^53 ns (traces/src/horizon.rs).
    "native-arrival-past-horizon.nst": native([begin(0, 1, 2**53 + 1), end(0)]),
    "native-gap-past-horizon.nst": native([begin(0, 1, 10), load(0, 64, 2**64 - 1), end(0)]),
}
for name, data in files.items():
    with open(f"tests/bad/tasks/{name}", "wb") as f:
        f.write(data)

# Plain native traces (version 1, a time column): a time and a gap past the horizon.
plain = {
    "past_horizon_time.nst": native(
        [rec(64, 0, 8, 0, TIME, 0), rec(128, 0, 8, 0, TIME, 20 * 10**15)], fields=2, version=1
    ),
    "past_horizon_gap.nst": native(
        [rec(64, 0, 8, 0, GAP, 5), rec(128, 0, 8, 0, GAP, 2**64 - 1)], fields=2, version=1
    ),
}
for name, data in plain.items():
    with open(f"tests/bad/{name}", "wb") as f:
        f.write(data)

# At the horizon (tests/bad/horizon/): the readers take these; the engines
# refuse to complete an access past it.
at = {
    "time-at-horizon.nst": native(
        [rec(64, 0, 8, 0, TIME, 0), rec(128, 0, 8, 0, TIME, 2**53)], fields=2, version=1
    ),
    "tasks-arrival-at-horizon.nst": native([begin(0, 1, 2**53), load(0, 64, 0), end(0)]),
}
for name, data in at.items():
    with open(f"tests/bad/horizon/{name}", "wb") as f:
        f.write(data)
