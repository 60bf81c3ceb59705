"""Schedulers written in Python see what the built-in ones see: the same
rule in Python gives byte-identical requests (every request's arrival,
start, end, queue, stall, ...), for round-robin, least-loaded and the
seed's NUMA-weighted dispatcher written as the article writes it."""

from pathlib import Path

import pytest

import numasim

SEED = Path(__file__).resolve().parents[2] / "scenarios" / "seed-inference.toml"


class RoundRobin:
    def __init__(self):
        self.next = 0

    def choose(self, request, workers):
        i = self.next % len(workers)
        self.next += 1
        return i


class LeastLoaded:
    """Least outstanding work; ties: lower utilization, then lower id."""

    def choose(self, request, workers):
        return min(range(len(workers)), key=lambda i: (workers[i].outstanding, workers[i].utilization, i))


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


def test_each_run_gets_its_own_copy():
    rr = RoundRobin()
    numasim.compare(experiment([("python", "py:rr")]), policies={"rr": rr})
    assert rr.next == 0, "the object given is copied, not used"


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
