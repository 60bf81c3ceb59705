"""Schedulers written in Python see what the built-in ones see: the same
rule in Python gives byte-identical requests (every request's arrival,
start, end, queue, stall, ...), for round-robin, least-loaded and the
seed's NUMA-weighted dispatcher written as the article writes it."""

from pathlib import Path

import pytest

import numasim
from rules import LeastLoaded, RoundRobin

SEED = Path(__file__).resolve().parents[2] / "scenarios" / "seed-inference.toml"


class NumaAwareScheduler:
    """The seed article's dispatcher: weight = 1 / (latency_ms + 1) × cpu_idle."""

    def dispatch(self, workers):
        best = 0
        for i, w in enumerate(workers):
            score = (1.0 / (w.stall_ms + 1.0)) * w.idle_fraction
            b = workers[best]
            best_score = (1.0 / (b.stall_ms + 1.0)) * b.idle_fraction
            if i > 0 and (score > best_score or (score == best_score and w.outstanding < b.outstanding)):
                best = i
        return best

    def choose(self, request, workers):
        return self.dispatch(workers)


def experiment(pairs):
    exp = numasim.Experiment.load(SEED)
    exp.seeds = [1, 2]
    exp.workload.duration_s = 1.0
    base = [r for r in exp.rows if r.name == "static"][0].to_dict()
    rows = []
    for name, sched in pairs:
        r = dict(base, name=name, scheduler=sched)
        rows.append(r)
    exp.rows = rows
    return exp


@pytest.mark.parametrize(
    "builtin,py,obj",
    [
        ("round-robin", "rr", RoundRobin()),
        ("least-loaded", "ll", LeastLoaded()),
        ("numa-weighted", "nw", NumaAwareScheduler()),
    ],
)
def test_a_python_scheduler_gives_the_builtins_requests(builtin, py, obj):
    exp = experiment([("builtin", builtin), ("python", f"py:{py}")])
    c = numasim.compare(exp, policies={py: obj})
    a, b = c.files["requests-builtin.csv"], c.files["requests-python.csv"]
    assert len(a) > 10_000
    assert a == b
    t = c.to_pandas().set_index("row")
    for col in ["requests", "tp50_ms", "tp99_ms", "max_ms", "mean_ms", "bandwidth_gbps"]:
        assert t.loc["builtin", col] == t.loc["python", col], col
    # A different rule gives different requests (the comparison can fail).
    if builtin != "round-robin":
        assert a != numasim.compare(experiment([("x", "round-robin")])).files["requests-x.csv"]


class Raises:
    def choose(self, request, workers):
        if request.id == 7:
            raise KeyError("no such shard in my table")
        return 0


class OutOfRange:
    def choose(self, request, workers):
        return len(workers) + 3 if request.id == 5 else 0


def test_a_raising_policy_raises_to_the_caller_and_writes_nothing(tmp_path):
    with pytest.raises(KeyError, match="no such shard") as e:
        numasim.compare(experiment([("python", "py:bad")]), policies={"bad": Raises()}, out=tmp_path / "o")
    assert any("choose" in str(t.name) for t in e.traceback)
    assert not (tmp_path / "o").exists()
    with pytest.raises(ValueError, match=r"py:bad.*request 5.*worker 11"):
        numasim.compare(experiment([("python", "py:bad")]), policies={"bad": OutOfRange()})
    with pytest.raises(numasim.NumasimError, match="py:missing"):
        numasim.compare(experiment([("python", "py:missing")]), policies={"bad": OutOfRange()})


class AlwaysMiss:
    """A predictor that calls every request a miss, at no simulated cost."""

    cost_us = 0.0

    def predict_proba(self, X):
        import numpy as np

        assert X.shape == (1, len(numasim.dataset_columns()))
        return np.array([[0.0, 1.0]])


def test_a_predictor_of_always_1_is_the_always_row():
    exp = experiment([("always", "numa-weighted-ewma"), ("python", "numa-weighted-ewma")])
    rows = exp.rows
    rows[0].preload = "always"
    rows[1].preload = "py:one"
    c = numasim.compare(exp, policies={"one": AlwaysMiss()})
    a, b = c.files["requests-always.csv"], c.files["requests-python.csv"]
    assert len(a) > 10_000 and a == b
    t = c.to_pandas().set_index("row")
    for col in ["tp99_ms", "preload_gb", "preload_hit_rate", "predict_cost_us", "prediction_accuracy"]:
        assert t.loc["always", col] == t.loc["python", col], col
    # The predictor's real time is measured per call and reported beside
    # the results (not simulated): one call per request of every seed.
    wall = c.prediction_wall_ns
    assert list(wall) == ["python"]
    assert wall["python"]["predictions"] == t.loc["python", "requests"]
    assert 0 < wall["python"]["p50_ns"] <= wall["python"]["p99_ns"]


class Costly(AlwaysMiss):
    cost_us = 6000.0  # above the 5 ms circuit breaker


def test_the_circuit_breaker_applies_to_python_predictors():
    exp = experiment([("python", "numa-weighted-ewma")])
    exp.rows[0].preload = "py:slow"
    t = numasim.compare(exp, policies={"slow": Costly()}).to_pandas()
    assert t["preload_fallbacks"][0] == t["requests"][0]
    assert t["preload_gb"][0] == 0.0


class RoundRobinSeen(RoundRobin):
    """Round-robin that counts its calls where the test can see them (the
    object given is deep-copied per run; a module-level list is shared)."""

    def choose(self, request, workers):
        CALLS.append(request.id)
        return super().choose(request, workers)


CALLS: list = []
SEEN: list = []


def test_each_run_gets_its_own_copy_and_python_is_called():
    del CALLS[:]
    rr = RoundRobinSeen()
    c = numasim.compare(experiment([("python", "py:rr")]), policies={"rr": rr})
    assert rr.next == 0, "the object given is copied, not used"
    assert len(CALLS) == c.to_pandas()["requests"][0], "one call per request of both seeds"
    # Each seed's copy starts at request 0.
    assert CALLS.count(0) == 2


class Recorder:
    """Records every feature row it is given; never preloads, at no cost:
    the run is the row without preload, whose dataset rows X must be."""

    cost_us = 0.0

    def predict_proba(self, X):
        import numpy as np

        SEEN.append(np.array(X[0], dtype=float))
        return np.array([[1.0, 0.0]])


def test_a_predictor_is_given_the_datasets_rows():
    import numpy as np

    exp = experiment([("python", "numa-weighted-ewma")])
    exp.seeds = [3]
    exp.workload.duration_s = 0.5
    X, _, cols = numasim.dataset(exp, row="python", seed=3)
    X2, _, cols2 = numasim.dataset(exp, row="python", seed=3, history=2, features=["hit_rate"])
    exp.rows[0].preload = "py:rec"
    del SEEN[:]
    numasim.compare(exp, policies={"rec": Recorder()})
    assert len(SEEN) == len(X) > 1000
    assert np.array_equal(np.vstack(SEEN), X)
    # A predictor trained on fewer columns says so: history and features.
    small = Recorder()
    small.history, small.features = 2, ["hit_rate"]
    del SEEN[:]
    numasim.compare(exp, policies={"rec": small})
    assert cols2 == ["remote_shard", "outstanding", "hit_rate_0", "hit_rate_1"]
    assert np.array_equal(np.vstack(SEEN), X2)
    bad = Recorder()
    bad.features = "hit_rate"
    with pytest.raises(numasim.NumasimError, match="py:rec: features 'hit_rate'|py:rec.*features"):
        numasim.compare(exp, policies={"rec": bad})


class Costs(AlwaysMiss):
    cost_us = 250.0


class DefaultCost:
    def predict_proba(self, X):
        import numpy as np

        return np.array([[0.0, 1.0]])


def test_a_predictors_cost_is_charged_in_simulated_time():
    exp = experiment([("free", "numa-weighted-ewma"), ("default", "numa-weighted-ewma"), ("costly", "numa-weighted-ewma")])
    for r, name in zip(exp.rows, ["free", "default", "costly"]):
        r.preload = f"py:{name}"
    t = numasim.compare(exp, policies={"free": AlwaysMiss(), "default": DefaultCost(), "costly": Costs()}).to_pandas().set_index("row")
    # The table's predict_cost_us is the simulated cost per call.
    assert t.loc["free", "predict_cost_us"] == 0.0
    assert t.loc["default", "predict_cost_us"] == 1.0, "the built-in learned preload's fixed 1 µs"
    assert t.loc["costly", "predict_cost_us"] == 250.0
    assert t.loc["costly", "mean_ms"] > t.loc["free", "mean_ms"], "the cost is paid in latency"


class RaisesToo:
    cost_us = 0.0

    def predict_proba(self, X):
        raise RuntimeError("model file is corrupt")


def test_a_raising_predictor_raises_to_the_caller_and_writes_nothing(tmp_path):
    exp = experiment([("python", "numa-weighted-ewma")])
    exp.rows[0].preload = "py:bad"
    with pytest.raises(RuntimeError, match="model file is corrupt") as e:
        numasim.compare(exp, policies={"bad": RaisesToo()}, out=tmp_path / "o")
    assert any("predict_proba" in str(t.name) for t in e.traceback)
    assert not (tmp_path / "o").exists()


def test_a_python_scheduler_at_line_level_gives_the_builtins_results():
    exp = numasim.Experiment.load(Path(__file__).resolve().parents[2] / "scenarios" / "fidelity-ladder.toml")
    exp.seeds = [1]
    exp.workload.duration_s = 0.02
    base = [r for r in exp.rows if r.name == "least-loaded"][0].to_dict()
    exp.rows = [dict(base, name="builtin"), dict(base, name="python", scheduler="py:ll")]
    c = numasim.compare(exp, fidelity="lines", policies={"ll": LeastLoaded()})
    t = c.to_pandas().set_index("row")
    assert t.loc["builtin", "requests"] > 1000
    for col in t.columns:
        if col not in ("tp99_diff_ms", "tp99_ci_low_ms", "tp99_ci_high_ms"):
            assert t.loc["builtin", col] == t.loc["python", col] or (t.loc["builtin", col] != t.loc["builtin", col]), col
    assert t.loc["python", "tp99_diff_ms"] == 0.0
