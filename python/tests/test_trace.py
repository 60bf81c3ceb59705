"""numasim.trace against the command line: `trace info --json` as a dict,
`trace convert` byte for byte, and a trace written from numpy arrays read
back by the binary."""

import json
import os
import subprocess
from pathlib import Path

import pytest

import numasim

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "tests" / "data" / "hello.lackey"
BIN = os.environ.get("NUMASIM_BIN")


def cli(*args):
    if not BIN:
        pytest.skip("NUMASIM_BIN is not set: no command-line binary to compare against (.ci/run sets it)")
    return subprocess.run([BIN, *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def test_info_is_the_command_lines_json():
    got = numasim.trace.info(str(HELLO))
    assert got["format"] == "lackey"
    assert got == json.loads(cli("trace", "info", "--json", str(HELLO)))
    with pytest.raises(FileNotFoundError):
        numasim.trace.info(ROOT / "no-such-trace.lackey")


def test_convert_writes_what_the_command_line_writes(tmp_path):
    n = numasim.trace.convert(HELLO, tmp_path / "py.nst")
    cli("trace", "convert", str(HELLO), str(tmp_path / "cli.nst"))
    assert n > 0
    assert (tmp_path / "py.nst").read_bytes() == (tmp_path / "cli.nst").read_bytes()
    with pytest.raises(numasim.NumasimError, match="output format"):
        numasim.trace.convert(HELLO, tmp_path / "out.unknown")
    assert sorted(os.listdir(tmp_path)) == ["cli.nst", "py.nst"], "nothing half-written"


def test_a_trace_made_in_python_replays(tmp_path):
    import numpy as np

    n = 4096
    addr = 0x1000_0000 + 64 * (np.arange(n) % 512)
    ops = np.where(np.arange(n) % 4 == 0, "S", "L")
    out = tmp_path / "made.nst"
    written = numasim.trace.write(
        out, thread=np.zeros(n, dtype=np.uint32), op=ops, addr=addr, size=np.full(n, 8), gap_ns=np.full(n, 2)
    )
    assert written == n
    info = numasim.trace.info(out)
    assert info["format"] == "native" and info["fields"]["time"] is True
    assert info == json.loads(cli("trace", "info", "--json", str(out)))
    # The same records as a CSV the binary reads, converted by the binary.
    csv = tmp_path / "made.csv"
    csv.write_text("thread,op,addr,size,gap_ns\n" + "".join(f"0,{o},{a:#x},8,2\n" for o, a in zip(ops, addr)))
    cli("trace", "convert", str(csv), str(tmp_path / "from-csv.nst"))
    assert numasim.trace.info(tmp_path / "from-csv.nst")["stats"] == info["stats"]
    with pytest.raises(numasim.NumasimError, match='record 1: op "Q"'):
        numasim.trace.write(tmp_path / "bad.nst", thread=[0, 0], op=["L", "Q"], addr=[0, 64], size=[8, 8])
    with pytest.raises(numasim.NumasimError, match="size has 1 values"):
        numasim.trace.write(tmp_path / "bad.nst", thread=[0, 0], op=["L", "L"], addr=[0, 64], size=[8])
    assert not (tmp_path / "bad.nst").exists()


def test_gen_writes_what_the_command_line_writes(tmp_path):
    n = numasim.trace.gen("zipf", tmp_path / "py.nst", count=20_000, threads=4, footprint=1 << 20, write_ratio=0.2, seed=7)
    cli(
        "trace", "gen", "zipf", "--out", str(tmp_path / "cli.nst"), "--count", "20000", "--threads", "4",
        "--footprint", "1M", "--write-ratio", "0.2", "--seed", "7",
    )
    assert n == 20_000
    assert (tmp_path / "py.nst").read_bytes() == (tmp_path / "cli.nst").read_bytes()
    with pytest.raises(numasim.NumasimError, match="unknown parameter"):
        numasim.trace.gen("zipf", tmp_path / "x.nst", colour="blue")
    with pytest.raises(numasim.NumasimError, match="unknown pattern"):
        numasim.trace.gen("spiral", tmp_path / "x.nst")
    with pytest.raises(numasim.NumasimError, match="threads must be at least 1"):
        numasim.trace.gen("zipf", tmp_path / "x.nst", threads=0)


def test_replay_gives_the_command_lines_summary(tmp_path):
    r = numasim.replay(HELLO, D1="32768,8,64")
    assert r.summary == json.loads(cli("replay", str(HELLO), "--D1", "32768,8,64", "--json"))
    assert set(r.events) == {"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw"}
    assert r.timeseries is None
    lru = numasim.replay(HELLO, replacement="lru", LL="1048576,16,64")
    assert lru.summary == json.loads(cli("replay", str(HELLO), "--replacement", "lru", "--LL", "1048576,16,64", "--json"))
    t = numasim.replay(HELLO, machine="xeon-2s")
    assert t.summary == json.loads(cli("replay", str(HELLO), "--machine", "xeon-2s", "--json"))
    out = tmp_path / "cli"
    cli("replay", str(HELLO), "--machine", "xeon-2s", "--out", str(out))
    import pandas as pd

    assert t.timeseries.equals(pd.read_csv(out / "timeseries.csv"))
    assert len(t.timeseries) > 0
    with pytest.raises(numasim.NumasimError, match="apply to the cache model"):
        numasim.replay(HELLO, machine="xeon-2s", D1="32768,8,64")
    with pytest.raises(numasim.NumasimError, match="hello.lackey: line 1, record 0: not a task trace"):
        numasim.replay(HELLO, machine="xeon-2s", workers="2")


def test_a_sampled_replay_is_the_command_lines(tmp_path):
    t = tmp_path / "z.nst"
    cli("trace", "gen", "zipf", "-n", "20000", "--threads", "4", "--footprint", "4M", "-o", str(t))
    r = numasim.replay(t, machine="xeon-2s", sample="200:2000", sample_seed=3)
    assert r.summary == json.loads(
        cli("replay", str(t), "--machine", "xeon-2s", "--sample", "200:2000", "--sample-seed", "3", "--json")
    )
    est = r.summary["sampled"]["metrics"]["latency_mean_ns"]
    assert est["ci_low"] <= est["estimate"] <= est["ci_high"]
    with pytest.raises(numasim.NumasimError, match="sample"):
        numasim.replay(t, machine="xeon-2s", sample="10")
    with pytest.raises(numasim.NumasimError, match="apply to the timing model"):
        numasim.replay(t, sample="200:2000")


def test_a_split_sampled_replay_is_the_command_lines(tmp_path):
    t = tmp_path / "z.nst"
    cli("trace", "gen", "zipf", "-n", "20000", "--threads", "4", "--footprint", "4M", "-o", str(t))
    r = numasim.replay(t, machine="xeon-2s", sample="200:2000", sample_seed=3, parts=3, part_warming=1000)
    assert r.summary == json.loads(
        cli(
            "replay", str(t), "--machine", "xeon-2s", "--sample", "200:2000", "--sample-seed", "3",
            "--parts", "3", "--part-warming", "1000", "--json",
        )
    )
    assert len(r.summary["parts"]) == 3 and r.summary["sampled"]["units"] == 10
    assert r.timeseries is None
    with pytest.raises(numasim.NumasimError, match="give machine and sample"):
        numasim.replay(t, machine="xeon-2s", parts=2)
    with pytest.raises(numasim.NumasimError, match="part_warming goes with parts"):
        numasim.replay(t, machine="xeon-2s", sample="200:2000", part_warming=5)
    with pytest.raises(numasim.NumasimError, match="parts 0"):
        numasim.replay(t, machine="xeon-2s", sample="200:2000", parts=0)


def test_a_resumed_replay_is_the_uninterrupted_one(tmp_path):
    t = tmp_path / "z.nst"
    ck = tmp_path / "c.ckpt"
    cli("trace", "gen", "zipf", "-n", "20000", "--threads", "4", "--footprint", "4M", "-o", str(t))
    full = numasim.replay(t, machine="xeon-2s", prefetch="stream:2:2", placement="migrate:2")
    saved = numasim.replay(
        t, machine="xeon-2s", prefetch="stream:2:2", placement="migrate:2", save_checkpoint=ck, checkpoint_at=7001
    )
    resumed = numasim.replay(t, machine="xeon-2s", prefetch="stream:2:2", placement="migrate:2", from_checkpoint=ck)
    assert saved.summary == full.summary and resumed.summary == full.summary
    assert resumed._series == full._series
    # The command line resumes from the checkpoint Python saved (with
    # --out, as Python keeps the time series too).
    assert resumed.summary == json.loads(
        cli(
            "replay", str(t), "--machine", "xeon-2s", "--prefetch", "stream:2:2", "--placement", "migrate:2",
            "--from-checkpoint", str(ck), "--json", "--out", str(tmp_path / "o"),
        )
    )
    with pytest.raises(numasim.NumasimError, match="taken by another run"):
        numasim.replay(t, machine="xeon-2s", from_checkpoint=ck)
    with pytest.raises(numasim.NumasimError, match="go together"):
        numasim.replay(t, machine="xeon-2s", checkpoint_at=5)


def test_convert_takes_the_command_lines_options(tmp_path):
    from collections import Counter

    # A plain trace cut into tasks at its most fetched instruction.
    fetches = Counter(
        line.split()[1].split(",")[0] for line in HELLO.read_text().splitlines() if line.startswith("I ")
    )
    pc = int(fetches.most_common(1)[0][0], 16)
    n = numasim.trace.convert(HELLO, tmp_path / "py.nst", task_pc=pc, keys=4, arrivals="poisson:1000:1")
    cli("trace", "convert", str(HELLO), str(tmp_path / "cli.nst"), "--task-pc", hex(pc), "--keys", "4", "--arrivals", "poisson:1000:1")
    assert n == fetches.most_common(1)[0][1] > 1, "a task per fetch"
    assert (tmp_path / "py.nst").read_bytes() == (tmp_path / "cli.nst").read_bytes()
    assert numasim.trace.info(tmp_path / "py.nst") == json.loads(cli("trace", "info", "--json", str(tmp_path / "py.nst")))
    # A task trace into its other form, re-timed.
    numasim.trace.convert(tmp_path / "py.nst", tmp_path / "py.csv", arrivals="poisson:500:2")
    cli("trace", "convert", str(tmp_path / "cli.nst"), str(tmp_path / "cli.csv"), "--arrivals", "poisson:500:2")
    assert (tmp_path / "py.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    # format and to: a lackey trace read as such, written as CSV under another name.
    numasim.trace.convert(HELLO, tmp_path / "py.txt", format="lackey", to="csv")
    cli("trace", "convert", str(HELLO), str(tmp_path / "cli.txt"), "--format", "lackey", "--to", "csv")
    assert (tmp_path / "py.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()
    with pytest.raises(numasim.NumasimError, match="no arrival times"):
        numasim.trace.convert(HELLO, tmp_path / "bad.nst", task_pc=pc)
    with pytest.raises(numasim.NumasimError, match="unknown output format"):
        numasim.trace.convert(HELLO, tmp_path / "bad.x", to="nope")
    assert not (tmp_path / "bad.nst").exists() and not (tmp_path / "bad.x").exists()
