"""The `.pyi` stubs name every public name: each of `numasim.__all__`, each
public method and attribute of its classes, each function of
`numasim.trace`, and each function of the extension `_numasim` (a stub
that lags the code fails here)."""

import ast
import inspect
from pathlib import Path

import numasim
from numasim import _numasim

PKG = Path(numasim.__file__).parent


def stub(name):
    """Top-level names of a stub, and each class's member names."""
    tree = ast.parse((PKG / name).read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets)
        if isinstance(node, ast.ClassDef):
            m = set()
            for b in node.body:
                if isinstance(b, ast.FunctionDef):
                    m.add(b.name)
                elif isinstance(b, ast.AnnAssign):
                    m.add(b.target.id)
            members[node.name] = m
    return top, members


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_every_public_name_has_a_stub():
    top, members = stub("__init__.pyi")
    ext, ext_members = stub("_numasim.pyi")
    for name in numasim.__all__:
        if name == "trace":
            continue
        assert name in top or name in ext, f"numasim.{name} has no stub"
    instances = {
        "Comparison": numasim.Comparison("", {}, [], []),
        "Replay": numasim.Replay({}),
    }
    for cls in ("Experiment", "Comparison", "Replay"):
        have = public(instances.get(cls, getattr(numasim, cls)))
        missing = have - members[cls]
        assert not missing, f"numasim.{cls}: no stub for {sorted(missing)}"
    for cls in ("Request", "Worker"):
        missing = public(getattr(_numasim, cls)) - ext_members[cls]
        assert not missing, f"numasim.{cls}: no stub for {sorted(missing)}"
    tr, _ = stub("trace.pyi")
    fns = {n for n, f in inspect.getmembers(numasim.trace, inspect.isfunction) if f.__module__ == "numasim.trace" and not n.startswith("_")}
    assert fns and fns <= tr, f"numasim.trace: no stub for {sorted(fns - tr)}"
    built = {n for n in public(_numasim) if callable(getattr(_numasim, n))}
    assert built - ext == set(), f"_numasim: no stub for {sorted(built - ext)}"
