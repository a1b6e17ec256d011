"""Bad input to every command: one line on stderr, exit code 2, no traceback, nothing touched.

Each row of :data:`MATRIX` runs one command (through ``cli.main``, as the console script
does) in a workspace holding good and broken files of every kind: missing, empty,
truncated, binary, non-UTF-8, another schema, a directory instead of a file, results
files with impossible values, and bad numbers and patterns for every option.  Each must
give exactly one stderr line ``benchkill: error: ...`` naming the problem, exit code 2,
no traceback, and leave every file of the workspace byte for byte as it was (and create
none).  ``run`` runs a fake suite (no TVM); the file commands that need TVM only parse.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from benchkill.bench.machine import collect_machine
from benchkill.bench.model import FAILED
from benchkill.cli.main import main
from benchkill.relax.text import MAX_MODULE_BYTES
from benchkill.results.asv_import import ASV_API_VERSION
from benchkill.results.locking import exclusive
from benchkill.results.store import SCHEMA_VERSION, save, to_dict
from tests.conftest import (
    BASE10,
    make_record,
    make_results,
    pass_records,
    suites_run,
    write_results,
)

MACHINE = collect_machine()

#: A small lowered module as TVMScript (what `benchkill generate chain 2` prints).
MODULE = """from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y: R.Tensor((4,), dtype="float32") = x
        return y
"""


#: Entry points of the user's Python (``--model``, ``--torch``) that go wrong.
ENTRIES = "bk_matrix_entries"
ENTRY_POINTS = """
def wrong_thing():
    return 42


def raises():
    raise ValueError("the user's bug")


def not_exportable():
    import torch

    class Det(torch.nn.Module):
        def forward(self, x):
            return torch.linalg.det(x)

    return Det(), (torch.ones(2, 3, 3),)


def not_buildable():
    import torch

    class Mask(torch.nn.Module):
        def forward(self, x):
            s = x.shape[0]
            return x + torch.full((s, s), float("-inf")).triu(1)

    return Mask(), (torch.zeros(4, 4),)
"""


def _onnx_files(w: Path) -> None:
    """A good ONNX model (``y = relu(x)``, x of shape 2x4) and a truncated copy."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    data = model.SerializeToString()
    (w / "good.onnx").write_bytes(data)
    (w / "truncated.onnx").write_bytes(data[: len(data) // 2])
    (w / "garbage.onnx").write_bytes(b"\x89PNG\r\n\x1a\n" * 8)


def _edited(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _results_file(path: Path, records, **machine) -> Path:
    save(make_results(records, **machine), path)
    return path


def _fake_run(path: Path, **machine) -> Path:
    """A results file of the fake suite on this machine (what ``run --resume`` takes)."""
    state = dict(name=MACHINE.name, git_commit=MACHINE.git_commit, git_dirty=MACHINE.git_dirty)
    state["tvm_version"] = MACHINE.tvm_version
    state["tvm_ffi_version"] = MACHINE.tvm_ffi_version
    state["python"], state["python_build"] = MACHINE.python, MACHINE.python_build
    state["malloc"], state["os"] = MACHINE.malloc, MACHINE.os
    results = make_results([], suites=("fake",), quick=False, **{**state, **machine})
    save(results, path)
    return path


def build_workspace(w: Path) -> None:
    """Every input file the matrix uses, good and bad."""
    good = write_results(w / "a.json")
    write_results(w / "b.json", 1.25)
    write_results(w / "other.json", name="tree")
    write_results(w / "future.json", version=SCHEMA_VERSION + 1)
    text = good.read_text()
    (w / "empty.json").write_text("")
    (w / "blank.json").write_text("  \n\n")
    (w / "truncated.json").write_text(text[: len(text) // 2])
    (w / "binary.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (w / "latin1.json").write_bytes('{"schema_version": 2, "x": "caf\u00e9"}'.encode("latin-1"))
    (w / "list.json").write_text("[1, 2, 3]")
    (w / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (w / "dir.json").mkdir()
    (w / "afile").write_text("a plain file\n")
    (w / "clash_figures").write_text("a file where a report's figures would go\n")
    (w / "report.md").write_text("# an older report\n")
    asv = {"version": ASV_API_VERSION - 1, "result_columns": [], "results": {}}
    (w / "asv_old.json").write_text(json.dumps(asv))
    _results_file(w / "negative.json", [make_record([-v for v in BASE10])])
    _results_file(w / "zeros.json", [make_record([0.0] * 10)])
    _edited(
        _results_file(w / "inflated.json", [make_record()]),
        lambda d: d["records"][0]["summary"].update(median=1000.0),
    )
    _results_file(w / "lots.json", [make_record(params={"bindings": "lots", "impl": "naive"})])
    peak = make_record([2.0**20] * 3, "vm_peak_bytes", "bytes", suite="vm", name="mlp")
    peak = replace(
        peak,
        params={"workload": "mlp", "exec_mode": "bytecode", "kill": None},
        extra={"static_live_bytes": "garbage"},
    )
    _results_file(w / "garbage_extra.json", [peak])
    crash = make_record((), "case", "", status=FAILED, error="RuntimeError: boom")
    _results_file(w / "failed_only.json", [crash])
    _edited(
        _results_file(w / "surrogate.json", [make_record()]),
        lambda d: d["records"][0].update(name="\ud800"),
    )
    dup = _results_file(w / "dup.json", [make_record()])
    _edited(dup, lambda d: d["records"].append(d["records"][0]))
    _edited(
        _results_file(w / "badtime.json", [make_record()]),
        lambda d: d["settings"].update(started_at="yesterday"),
    )
    _results_file(w / "fake_records.json", [make_record(suite="fake", name="case")])
    (w / "module.py").write_text(MODULE)
    (w / "truncated.py").write_text(MODULE[: len(MODULE) // 2])
    (w / "empty.py").write_text("")
    (w / "notmodule.py").write_text("x = 1\n")
    (w / "binary.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    (w / "latin1.py").write_bytes("# caf\u00e9\n".encode("latin-1") + MODULE.encode())
    _fake_run(w / "fake.json")
    _fake_run(w / "othermachine.json", name="elsewhere")
    _fake_run(w / "othercommit.json", git_commit="0000000")
    _fake_run(w / "flipped.json", git_dirty=not MACHINE.git_dirty)
    _fake_run(w / "othertvm.json", tvm_version="0.1.0")
    _fake_run(w / "otherffi.json", tvm_ffi_version="0.0.1")
    _fake_run(w / "otherpython.json", python_build="/elsewhere (main, GCC 1.0)")
    _fake_run(w / "othermalloc.json", malloc="libelsewhere.so.1")
    _fake_run(w / "otherkernel.json", os="Linux-0.0-elsewhere-x86_64")
    _fake_run(w / "locked.json")
    trust = w / "trust-broken"
    trust.mkdir()
    (trust / "a-0.json").write_text("{garbage")  # a trust run's name, not a results file
    dangling = w / "trust-dangling"
    dangling.mkdir()
    os.symlink("../nowhere.json", dangling / "a-0.json")  # a run's name, a dangling link
    save(suites_run(pass_records()), w / "figures.json")  # results that plot draws
    (w / "inway_figures").mkdir()  # a file of the user's where a figure would go
    (w / "inway_figures" / "pass_time_scaling.png").write_text("the user's own file\n")
    (w / "undefined.py").write_text(MODULE.replace("= x\n", "= zzz\n"))
    (w / f"{ENTRIES}.py").write_text(ENTRY_POINTS)
    (w / f"{ENTRIES}_broken.py").write_text("raise RuntimeError('broken at import')\n")
    if importlib.util.find_spec("onnx"):
        _onnx_files(w)
    head, _, body = MODULE.partition("    def main")
    (w / "symbolic.py").write_text(
        head + '    def main(x: R.Tensor(("n",), dtype="float32")):\n        return x\n'
    )


# (id, argv, fragment of the error line).  {w} is the workspace.
#: The rows that need the models extra (torch, onnx, onnxruntime): run wherever it is
#: installed, and always in CI.
MODEL_ROWS = [
    ("memory: truncated ONNX", ["memory", "--onnx", "truncated.onnx"], "corrupt or truncated"),
    ("memory: garbage ONNX", ["memory", "--onnx", "garbage.onnx"], "not an ONNX model"),
    ("memory: ONNX is /dev/zero", ["memory", "--onnx", "/dev/zero"], "not a regular file"),
    ("memory: ONNX missing", ["memory", "--onnx", "missing.onnx"], "No such file"),
    ("memory: ONNX unknown dynamic input", ["memory", "--onnx", "good.onnx", "--dynamic", "y:0"],
     "the model has no input 'y'"),
    ("memory: ONNX dynamic axis", ["memory", "--onnx", "good.onnx", "--dynamic", "x:7"],
     "input 'x' has 2 axes"),
    ("profile: ONNX bad dynamic spelling", ["profile", "--onnx", "good.onnx", "--dynamic", "x"],
     "is not INPUT:AXIS"),
    ("memory: torch entry point returns a number", ["memory", "--torch", f"{ENTRIES}:wrong_thing"],
     "expected (torch.nn.Module, example inputs)"),
    ("memory: torch unknown dynamic input", ["memory", "--torch", f"{ENTRIES}:not_buildable",
     "--dynamic", "y:0"], "the model has no input 'y'"),
    ("equivalence: frontend rejects", ["equivalence", "--torch", f"{ENTRIES}:not_exportable"],
     "TVM's PyTorch frontend rejected the model"),
    ("memory: build rejects", ["memory", "--torch", f"{ENTRIES}:not_buildable", "--kill", "none",
     "tvm", "--no-trace"], "TVM's build rejects"),
]  # fmt: skip

MATRIX = [
    # --- run ---------------------------------------------------------------------------
    ("run: unknown suite", ["run", "--suite", "nope"], "unknown suite 'nope'"),
    ("run: empty suite list", ["run", "--suite", ","], "no suite named"),
    ("run: empty suite", ["run", "--suite", ""], "--suite '': no suite named"),
    ("run: out exists", ["run", "--out", "a.json"], "a.json: already exists"),
    ("run: out is a plain file", ["run", "--out", "afile"], "afile: already exists"),
    ("run: out is a directory", ["run", "--out", "dir.json"], "is a directory"),
    ("run: out under a file", ["run", "--out", "afile/r.json"], "afile is not a directory"),
    ("run: resume missing", ["run", "--resume", "missing.json"], "no such file"),
    ("run: resume empty", ["run", "--resume", "empty.json"], "empty file"),
    ("run: resume truncated", ["run", "--resume", "truncated.json"], "(truncated?)"),
    ("run: resume binary", ["run", "--resume", "binary.json"], "invalid UTF-8"),
    ("run: resume non-UTF-8", ["run", "--resume", "latin1.json"], "invalid UTF-8"),
    ("run: resume directory", ["run", "--resume", "dir.json"], "is a directory"),
    ("run: resume newer schema", ["run", "--resume", "future.json"], "schema_version"),
    ("run: resume asv file", ["run", "--resume", "asv_old.json"], "no schema_version"),
    ("run: resume and out", ["run", "--resume", "fake.json", "--out", "x.json"], "do not give"),
    ("run: resume other suite", ["run", "--resume", "fake.json", "--suite", "pass"], "--suite"),
    ("run: resume other machine", ["run", "--resume", "othermachine.json"], "'elsewhere'"),
    ("run: resume other commit", ["run", "--resume", "othercommit.json"], "commit 0000000"),
    ("run: resume clean/dirty flip", ["run", "--resume", "flipped.json"], "--allow-code-change"),
    ("run: resume other tvm", ["run", "--resume", "othertvm.json"], "apache-tvm 0.1.0"),
    ("run: resume other tvm-ffi", ["run", "--resume", "otherffi.json"], "apache-tvm-ffi 0.0.1"),
    ("run: resume other python", ["run", "--resume", "otherpython.json"], "Python build /elsew"),
    ("run: resume other malloc", ["run", "--resume", "othermalloc.json"], "malloc libelsewhere"),
    ("run: resume other kernel", ["run", "--resume", "otherkernel.json"], "OS Linux-0.0-elsewhere"),
    ("run: resume locked", ["run", "--resume", "locked.json"], "another benchkill run"),
    ("run: retry without resume", ["run", "--retry-failed"], "give --resume"),
    ("run: allow without resume", ["run", "--allow-code-change"], "give --resume"),
    ("run: unknown option", ["run", "--fast"], "unrecognized arguments: --fast"),
    # --- compare -----------------------------------------------------------------------
    ("compare: missing base", ["compare", "missing.json", "a.json"], "no such file"),
    ("compare: missing new", ["compare", "a.json", "missing.json"], "no such file"),
    ("compare: empty", ["compare", "a.json", "empty.json"], "empty file"),
    ("compare: blank", ["compare", "a.json", "blank.json"], "empty file"),
    ("compare: truncated", ["compare", "a.json", "truncated.json"], "(truncated?)"),
    ("compare: binary", ["compare", "a.json", "binary.json"], "invalid UTF-8"),
    ("compare: non-UTF-8", ["compare", "latin1.json", "a.json"], "invalid UTF-8"),
    ("compare: directory", ["compare", "dir.json", "a.json"], "is a directory"),
    ("compare: newer schema", ["compare", "a.json", "future.json"], "schema_version 3"),
    ("compare: JSON list", ["compare", "a.json", "list.json"], "neither a benchkill"),
    ("compare: nested too deep", ["compare", "a.json", "deep.json"], "nested too deeply"),
    ("compare: old asv", ["compare", "a.json", "asv_old.json"], "asv results version 1"),
    ("compare: not a file", ["compare", "a.json", "/dev/null"], "not a regular file"),
    ("compare: no common case", ["compare", "a.json", "other.json"], "no case in common"),
    ("compare: negative times", ["compare", "a.json", "negative.json"], "negative sample"),
    ("compare: all-zero times", ["compare", "zeros.json", "a.json"], "every sample is 0"),
    ("compare: inflated summary", ["compare", "a.json", "inflated.json"], "summary.median"),
    ("compare: lone surrogate", ["compare", "a.json", "surrogate.json"], "lone surrogate"),
    ("compare: duplicate record", ["compare", "a.json", "dup.json"], "same measurement"),
    ("compare: missing policy", ["compare", "a.json", "a.json", "--policy", "no.toml"], "no such"),
    ("compare: policy not TOML", ["compare", "a.json", "a.json", "--policy", "a.json"], "TOML"),
    # --- merge and --shard -------------------------------------------------------------
    ("merge: missing", ["merge", "missing.json", "--out", "m.json"], "no such file"),
    ("merge: not a shard", ["merge", "a.json", "--out", "m.json"], "not a shard"),
    ("merge: no --out", ["merge", "a.json"], "--out FILE is required"),
    ("merge: over a file", ["merge", "a.json", "--out", "a.json"], "already exists"),
    ("run: shard beyond N", ["run", "--shard", "3/2"], "K must be in 1..N"),
    ("fuzz: shard not K/N", ["fuzz", "--shard", "2"], "expected K/N"),
    ("export: not a repository", ["export", "a.json", "--out", "asv"], "not inside a git"),
    ("export: no --out", ["export", "a.json"], "--out"),
    # --- bisect ------------------------------------------------------------------------
    ("bisect: not a repository", ["bisect", "HEAD~1", "HEAD"], "not inside a git repository"),
    ("bisect: unknown family", ["bisect", "A", "B", "--case", "nope:3"], "FAMILY is one of"),
    ("bisect: repo not a dir", ["bisect", "A", "B", "--repo", "a.json"], "not a directory"),
    # --- history -----------------------------------------------------------------------
    ("history: missing", ["history", "missing.json"], "no such file"),
    ("history: truncated", ["history", "a.json", "truncated.json"], "(truncated?)"),
    ("history: unknown machine", ["history", "a.json", "--machine", "nope"], "no run of it"),
    ("compare: bad start time", ["compare", "a.json", "badtime.json"], "'yesterday'"),
    ("compare: factor text", ["compare", "a.json", "b.json", "--factor", "abc"], "'abc'"),
    ("compare: factor 1", ["compare", "a.json", "b.json", "--factor", "1"], "above 1"),
    ("compare: factor below 1", ["compare", "a.json", "b.json", "--factor", "0.5"], "above 1"),
    ("compare: factor nan", ["compare", "a.json", "b.json", "--factor", "nan"], "finite"),
    ("compare: factor inf", ["compare", "a.json", "b.json", "--factor", "inf"], "finite"),
    ("compare: alpha 0", ["compare", "a.json", "b.json", "--alpha", "0"], "between 0 and 1"),
    ("compare: alpha 1", ["compare", "a.json", "b.json", "--alpha", "1"], "between 0 and 1"),
    ("compare: alpha text", ["compare", "a.json", "b.json", "--alpha", "x"], "invalid alpha"),
    ("compare: regex (", ["compare", "a.json", "b.json", "--only", "("], "regular expression"),
    ("compare: regex [", ["compare", "a.json", "b.json", "--only", "[a-"], "regular expression"),
    ("compare: regex *", ["compare", "a.json", "b.json", "--only", "*x"], "regular expression"),
    ("compare: regex none", ["compare", "a.json", "b.json", "--only", "zzz"], "matching --only"),
    ("compare: one file", ["compare", "a.json"], "required: new"),
    # --- trust -------------------------------------------------------------------------
    ("trust: repeats 1", ["trust", "--repeats", "1"], "must be at least 2"),
    ("trust: repeats text", ["trust", "--repeats", "ten"], "expected an integer"),
    ("trust: repeats float", ["trust", "--repeats", "2.5"], "expected an integer"),
    ("trust: hook 0", ["trust", "--hook", "0"], "must be above 0"),
    ("trust: hook negative", ["trust", "--hook", "-0.1"], "must be above 0"),
    ("trust: hook inf", ["trust", "--hook", "inf"], "finite"),
    ("trust: factor", ["trust", "--factor", "0.9"], "above 1"),
    ("trust: alpha", ["trust", "--alpha", "1.5"], "between 0 and 1"),
    ("trust: out is a file", ["trust", "--out", "afile", "--repeats", "2"], "not a directory"),
    ("trust: out empty", ["trust", "--out", ""], "--out: an empty path"),
    ("trust: broken run", ["trust", "--out", "trust-broken", "--repeats", "2"], "a-0.json"),
    (
        "trust: dangling run",
        ["trust", "--out", "trust-dangling", "--repeats", "2"],
        "a-0.json: already exists",
    ),
    # --- plot --------------------------------------------------------------------------
    ("plot: missing", ["plot", "missing.json", "--out", "figs"], "no such file"),
    ("plot: empty", ["plot", "empty.json", "--out", "figs"], "empty file"),
    ("plot: truncated", ["plot", "truncated.json", "--out", "figs"], "(truncated?)"),
    ("plot: binary", ["plot", "binary.json", "--out", "figs"], "invalid UTF-8"),
    ("plot: directory", ["plot", "dir.json", "--out", "figs"], "is a directory"),
    ("plot: newer schema", ["plot", "future.json", "--out", "figs"], "schema_version"),
    ("plot: bindings lots", ["plot", "lots.json", "--out", "figs"], "params.bindings"),
    ("plot: garbage extra", ["plot", "garbage_extra.json", "--out", "figs"], "static_live"),
    ("plot: negative", ["plot", "negative.json", "--out", "figs"], "negative sample"),
    ("plot: out is a file", ["plot", "a.json", "--out", "afile"], "not a directory"),
    ("plot: out is the input", ["plot", "a.json", "--out", "a.json"], "a.json: is an input"),
    ("plot: out under a file", ["plot", "a.json", "--out", "afile/figs"], "not a directory"),
    ("plot: out unwritable", ["plot", "a.json", "--out", "/proc/self"], "/proc/self: cannot"),
    ("plot: out empty", ["plot", "a.json", "--out", ""], "--out: an empty path"),
    (
        "plot: a figure of the user's",
        ["plot", "figures.json", "--out", "inway_figures"],
        "pass_time_scaling.png: already exists",
    ),
    # --- report ------------------------------------------------------------------------
    ("report: missing", ["report", "missing.json"], "no such file"),
    ("report: newer schema", ["report", "future.json", "--out", "r.md"], "schema_version"),
    ("report: non-UTF-8", ["report", "latin1.json", "--out", "r.md"], "invalid UTF-8"),
    ("report: out is the input", ["report", "a.json", "--out", "a.json"], "is an input"),
    ("report: out is results", ["report", "a.json", "--out", "b.json"], "results file"),
    ("report: out is cut results", ["report", "a.json", "--out", "truncated.json"], "results"),
    ("report: out is a directory", ["report", "a.json", "--out", "dir.json"], "is a directory"),
    ("report: out unwritable", ["report", "a.json", "--out", "/proc/self/r.md"], "cannot"),
    ("report: bindings lots", ["report", "lots.json", "--out", "r.md"], "params.bindings"),
    ("report: garbage extra", ["report", "garbage_extra.json", "--out", "r.md"], "static_live"),
    ("report: inflated summary", ["report", "inflated.json", "--out", "r.md"], "summary.median"),
    ("report: out exists", ["report", "a.json", "--out", "report.md"], "already exists"),
    ("report: out is any file", ["report", "a.json", "--out", "afile"], "afile: already exists"),
    ("report: out empty", ["report", "a.json", "--out", ""], "--out: an empty path"),
    (
        "report: figures dir is a file",
        ["report", "a.json", "--out", "clash.md"],
        "clash_figures: exists and is not a directory",
    ),
    (
        "report: a figure of the user's",
        ["report", "figures.json", "--out", "inway.md"],
        "pass_time_scaling.png: already exists",
    ),
    # --- targets -----------------------------------------------------------------------
    ("targets: missing", ["targets", "missing.json"], "no such file"),
    ("targets: empty", ["targets", "empty.json"], "empty file"),
    ("targets: directory", ["targets", "dir.json"], "is a directory"),
    ("targets: old asv file", ["targets", "asv_old.json"], "asv results version 1"),
    ("targets: JSON list", ["targets", "list.json"], "neither a benchkill"),
    ("targets: bindings lots", ["targets", "lots.json"], "params.bindings"),
    ("targets: no pass or vm records", ["targets", "fake_records.json"], "no pass or vm"),
    ("targets: zero times", ["targets", "zeros.json"], "every sample is 0"),
    # --- generate ----------------------------------------------------------------------
    ("generate: unknown family", ["generate", "nope", "5"], "unknown family 'nope'"),
    ("generate: N 0", ["generate", "chain", "0"], "must be at least 1"),
    ("generate: N negative", ["generate", "chain", "-5"], "must be at least 1"),
    ("generate: N text", ["generate", "chain", "many"], "expected an integer"),
    ("generate: N float", ["generate", "chain", "1e3"], "expected an integer"),
    ("generate: N huge", ["generate", "chain", "100000000000", "--count"], "at most 10,000,000"),
    ("generate: seed negative", ["generate", "chain", "5", "--seed", "-1"], "at least 0"),
    ("generate: seed text", ["generate", "chain", "5", "--seed", "x"], "expected an integer"),
    # --- apply -------------------------------------------------------------------------
    ("apply: missing", ["apply", "missing.py"], "No such file"),
    ("apply: empty", ["apply", "empty.py"], "is empty"),
    ("apply: truncated", ["apply", "truncated.py"], "cannot parse"),
    ("apply: binary", ["apply", "binary.py"], "codec can't decode"),
    ("apply: non-UTF-8", ["apply", "latin1.py"], "codec can't decode"),
    ("apply: directory", ["apply", "dir.json"], "Is a directory"),
    ("apply: results file", ["apply", "a.json"], "cannot parse"),
    ("apply: not a module", ["apply", "notmodule.py"], "cannot parse"),
    ("apply: out is the input", ["apply", "module.py", "--out", "module.py"], "is an input"),
    ("apply: out is results", ["apply", "module.py", "--out", "a.json"], "results file"),
    ("apply: out is a directory", ["apply", "module.py", "--out", "dir.json"], "is a directory"),
    ("apply: out unwritable", ["apply", "module.py", "--out", "/proc/self/m.py"], "m.py: cannot"),
    ("apply: out exists", ["apply", "module.py", "--out", "afile"], "afile: already exists"),
    ("apply: out empty", ["apply", "module.py", "--out", ""], "--out: an empty path"),
    ("apply: undefined variable", ["apply", "undefined.py"], "Undefined variable: zzz"),
    ("apply: unknown family", ["apply", "--generate", "nope", "5"], "unknown family"),
    ("apply: N text", ["apply", "--generate", "chain", "x"], "N expected an integer"),
    ("apply: N 0", ["apply", "--generate", "chain", "0"], "N must be at least 1"),
    ("apply: N huge", ["apply", "--generate", "chain", "99999999999"], "at most 10,000,000"),
    ("apply: file and generate", ["apply", "module.py", "--generate", "chain", "5"], "not allowed"),
    ("apply: kill", ["apply", "module.py", "--kill", "best"], "invalid choice: 'best'"),
    ("apply: kill none", ["apply", "module.py", "--kill", "none"], "invalid choice: 'none'"),
    ("apply: seed negative", ["apply", "--generate", "chain", "5", "--seed", "-1"], "at least 0"),
    # --- profile -----------------------------------------------------------------------
    ("profile: unknown family", ["profile", "--generate", "nope", "5"], "unknown family 'nope'"),
    ("profile: N 0", ["profile", "--generate", "chain", "0"], "N must be at least 1"),
    ("profile: a later N 0", ["profile", "--generate", "chain", "5", "0"], "at least 1"),
    ("profile: N text", ["profile", "--generate", "chain", "lots"], "N expected an integer"),
    ("profile: N huge", ["profile", "--generate", "chain", "100000000000"], "at most 10,000,000"),
    ("profile: repeats 0", ["profile", "--generate", "chain", "5", "--repeats", "0"], "least 1"),
    ("profile: seed negative", ["profile", "--generate", "chain", "5", "--seed", "-2"], "least 0"),
    ("profile: no module", ["profile"], "one of the arguments FILE --generate --model"),
    ("profile: family without N", ["profile", "--generate", "chain"], "at least one N"),
    ("profile: a family for FILE", ["profile", "chain"], "give FAMILY and at least one N"),
    (
        "profile: generate and file",
        ["profile", "module.py", "--generate", "chain", "5"],
        "argument --generate: not allowed with argument FILE",
    ),
    ("profile: file missing", ["profile", "missing.py"], "No such file"),
    (
        "profile: lower a generated module",
        ["profile", "--generate", "chain", "5", "--lower"],
        "--lower needs a FILE",
    ),
    (
        "profile: func of a generated module",
        ["profile", "--generate", "chain", "5", "--func", "f"],
        "--func applies to FILE",
    ),
    ("profile: file truncated", ["profile", "truncated.py"], "cannot parse"),
    (
        "profile: file without the function",
        ["profile", "module.py", "--func", "decode"],
        "no Relax function 'decode' (it has: main)",
    ),
    # --- verify ------------------------------------------------------------------------
    ("verify: missing", ["verify", "missing.py"], "No such file"),
    ("verify: empty", ["verify", "empty.py"], "is empty"),
    ("verify: truncated", ["verify", "truncated.py"], "cannot parse"),
    ("verify: binary", ["verify", "binary.py"], "codec can't decode"),
    ("verify: directory", ["verify", "dir.json"], "Is a directory"),
    ("verify: results file", ["verify", "a.json"], "cannot parse"),
    ("verify: not a module", ["verify", "notmodule.py"], "cannot parse"),
    # --- fuzz --------------------------------------------------------------------------
    ("fuzz: examples 0", ["fuzz", "--examples", "0"], "at least 1"),
    ("fuzz: examples text", ["fuzz", "--examples", "many"], "expected an integer"),
    ("fuzz: seed negative", ["fuzz", "--seed", "-1"], "at least 0"),
    ("fuzz: max statements 0", ["fuzz", "--max-statements", "0"], "at least 1"),
    ("fuzz: buildable negative", ["fuzz", "--buildable", "-1"], "at least 0"),
    ("fuzz: buildable text", ["fuzz", "--buildable", "x"], "expected an integer"),
    # --- memory ------------------------------------------------------------------------
    (
        "memory: no input",
        ["memory"],
        "one of the arguments FILE --workload --model --torch --onnx is required",
    ),
    ("memory: missing", ["memory", "missing.py"], "No such file"),
    ("memory: empty", ["memory", "empty.py"], "is empty"),
    ("memory: directory", ["memory", "dir.json"], "Is a directory"),
    ("memory: unknown workload", ["memory", "--workload", "nosuch"], "invalid choice: 'nosuch'"),
    ("memory: repeats 0", ["memory", "--workload", "chain", "--repeats", "0"], "at least 1"),
    ("memory: kill", ["memory", "--workload", "chain", "--kill", "all"], "invalid choice: 'all'"),
    ("memory: exec mode", ["memory", "--workload", "chain", "--exec-mode", "jit"], "'jit'"),
    ("memory: allocator", ["memory", "--workload", "chain", "--memory-cfg", "x"], "choice: 'x'"),
    ("memory: quick of a file", ["memory", "module.py", "--quick"], "--quick applies to"),
    ("memory: func of a workload", ["memory", "--workload", "chain", "--func", "f"], "--func"),
    ("memory: top text", ["memory", "--workload", "chain", "--top", "x"], "expected an integer"),
    ("memory: set without =", ["memory", "--workload", "chain", "--set", "n"], "NAME=VALUE"),
    (
        "memory: negative dimension",
        ["memory", "symbolic.py", "--kill", "none", "--no-trace", "--set", "n=-1"],
        "dimension 'n' of parameter 'x' is -1",
    ),
    # --- equivalence -------------------------------------------------------------------
    ("equivalence: missing", ["equivalence", "missing.py"], "no such file or directory"),
    (
        "equivalence: stages",
        ["equivalence", "module.py", "--stages", "lowered,bogus"],
        "comma-separated list of as-written, lowered, rekilled",
    ),
    ("equivalence: no stage", ["equivalence", "module.py", "--stages", ","], "comma-separated"),
    ("equivalence: jobs 0", ["equivalence", "module.py", "--jobs", "0"], "at least 1"),
    ("equivalence: timeout 0", ["equivalence", "module.py", "--timeout", "0"], "above 0"),
    ("equivalence: timeout huge", ["equivalence", "module.py", "--timeout", "1e10"], "a week"),
    ("equivalence: opt level", ["equivalence", "module.py", "--opt-level", "-1"], "at least 0"),
    ("equivalence: out is a file", ["equivalence", "module.py", "--out", "afile"], "not a dir"),
    ("equivalence: out empty", ["equivalence", "module.py", "--out", ""], "an empty path"),
    (
        "equivalence: diffs is the input",
        ["equivalence", "module.py", "--out", "module.py"],
        "is an input",
    ),
    # --- module files that are not regular files, or too large (../fifo.py and ../huge.py
    # are made beside the workspace by test_bad_input: a FIFO nobody writes, a sparse file
    # beyond benchkill.relax.text.MAX_MODULE_BYTES) --------------------------------------
    *(
        (f"{command}: {what}", [command, path, *extra], fragment)
        for command, extra in (
            ("apply", []),
            ("verify", []),
            ("memory", []),
            ("profile", []),
            ("equivalence", []),
        )
        for what, path, fragment in (
            ("/dev/zero", "/dev/zero", "not a regular file"),
            ("a FIFO", "../fifo.py", "not a regular file"),
            ("too large", "../huge.py", "larger than 268,435,456 for"),
        )
    ),
    # --- a model's front doors -------------------------------------------------------------
    (
        "memory: entry point returns a number",
        ["memory", "--model", f"{ENTRIES}:wrong_thing"],
        "returned a int",
    ),
    (
        "memory: entry point raises",
        ["memory", "--model", f"{ENTRIES}:raises"],
        "raised ValueError: the user's bug",
    ),
    (
        "memory: entry point does not import",
        ["memory", "--model", f"{ENTRIES}_broken:f"],
        "raised RuntimeError: broken at import",
    ),
    (
        "memory: no such entry module",
        ["memory", "--model", "no_such_pkg_xyz:f"],
        "no module named 'no_such_pkg_xyz'",
    ),
    ("memory: no such entry function", ["memory", "--model", f"{ENTRIES}:nope"], "no 'nope'"),
    ("profile: entry point raises", ["profile", "--model", f"{ENTRIES}:raises"], "ValueError"),
    (
        "equivalence: entry point raises",
        ["equivalence", "--model", f"{ENTRIES}:raises"],
        "ValueError",
    ),
    (
        "memory: dynamic of --model",
        ["memory", "--model", f"{ENTRIES}:raises", "--dynamic", "x:0"],
        "dynamic dimensions apply to torch and onnx",
    ),
    (
        "memory: dynamic of a workload",
        ["memory", "--workload", "chain", "--dynamic", "x:0"],
        "--dynamic applies to --torch and --onnx",
    ),
    ("equivalence: paths and a model", ["equivalence", "module.py", "--model", "a:b"], "not both"),
    ("equivalence: nothing", ["equivalence"], "give PATHs or one of --model"),
    *(MODEL_ROWS if importlib.util.find_spec("torch") or os.environ.get("CI") == "true" else ()),
    # --- the command line itself --------------------------------------------------------
    ("unknown command", ["frobnicate"], "invalid choice: 'frobnicate'"),
]


#: Bad input in an old spelling (a deprecated alias, kept one release): the same one error
#: line and exit code 2, after one warning line per old spelling saying what to use.
#: (id, argv, fragment of the error line, the old spellings' warnings).
OLD_SPELLINGS = [
    ("apply --variant", ["apply", "module.py", "--variant", "best"], "'best'", []),
    (
        "apply --variant, then a bad file",
        ["apply", "missing.py", "--variant", "tvm"],
        "No such file",
        ["--variant is deprecated; use --kill"],
    ),
    (
        "memory --runs",
        ["memory", "--workload", "chain", "--runs", "2", "--set", "n=3"],
        "--set and --func apply to FILE",
        ["--runs is deprecated; use --repeats"],
    ),
    ("memory --runs 0", ["memory", "--workload", "chain", "--runs", "0"], "at least 1", []),
    (
        "memory --full",
        ["memory", "module.py", "--full", "--set", "n"],
        "NAME=VALUE",
        ["--full is deprecated; use no option (full sizes are the default)"],
    ),
    (
        "profile FAMILY N",
        ["profile", "nope", "5"],
        "unknown family 'nope'",
        ["profile FAMILY N ... is deprecated; use profile --generate FAMILY N ..."],
    ),
    ("profile FAMILY N 0", ["profile", "chain", "0"], "argument N: must be at least 1", []),
    (
        "profile --module",
        ["profile", "--module", "missing.py"],
        "No such file",
        ["--module is deprecated; use FILE"],
    ),
    (
        "profile --module and --generate",
        ["profile", "--module", "module.py", "--generate", "chain", "5"],
        "not allowed with argument --module",
        ["--module is deprecated; use FILE"],
    ),
    ("trust --trials 1", ["trust", "--trials", "1"], "argument --trials: must be at least 2", []),
    ("trust --slowdown 0", ["trust", "--slowdown", "0"], "argument --slowdown: invalid", []),
    (
        "trust --dir, --trials",
        ["trust", "--dir", "afile", "--trials", "2"],
        "afile: exists and is not a directory",
        ["--dir is deprecated; use --out", "--trials is deprecated; use --repeats"],
    ),
    (
        "trust --slowdown, --dir",
        ["trust", "--slowdown", "0.1", "--dir", "trust-broken", "--trials", "2"],
        "a-0.json",
        [
            "--slowdown is deprecated; use --hook",
            "--dir is deprecated; use --out",
            "--trials is deprecated; use --repeats",
        ],
    ),
    ("fuzz --examples 0", ["fuzz", "--examples", "0"], "argument --examples: must be at", []),
    (
        "equivalence --diffs",
        ["equivalence", "module.py", "--diffs", "afile"],
        "not a directory",
        ["--diffs is deprecated; use --out"],
    ),
]

#: Good input that cannot be measured: one error line, exit code 3, nothing touched.
NOT_MEASURED = [
    ("plot: only failed", ["plot", "failed_only.json", "--out", "figs"], "nothing to draw"),
    ("targets: only failed", ["targets", "failed_only.json"], "no target figure could be"),
    ("equivalence: no module", ["equivalence", "notmodule.py", "empty.py"], "no Relax modules"),
    ("equivalence: unreadable", ["equivalence", "binary.py", "truncated.py"], "no Relax modules"),
]


def test_the_matrix_covers_every_command_with_at_least_60_cases():
    from benchkill.cli.main import COMMANDS

    assert len(MATRIX) >= 60
    assert {argv[0] for _, argv, _ in MATRIX} >= set(COMMANDS)
    names = [row[0] for row in MATRIX + OLD_SPELLINGS + NOT_MEASURED]
    assert len(set(names)) == len(names)


def snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` -> sha256 of its bytes (``dir`` for a directory)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root)] = "dir"
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                out[os.path.relpath(path, root)] = f"link to {os.readlink(path)}"
                continue
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("matrix-template")
    build_workspace(root)
    return root


def check(argv, code, fragment, warnings, template, work, monkeypatch, capsys, fake_suite):
    """``benchkill ARGV`` in a copy of the workspace: exit ``code``, the ``warnings`` lines
    then one error line holding ``fragment`` on stderr, no traceback, nothing touched."""
    import shutil

    shutil.copytree(template, work, symlinks=True)
    monkeypatch.chdir(work)
    with exclusive(work / "locked.json"):  # a run that is writing locked.json right now
        before = snapshot(work)
        exit_code = main(argv)
        captured = capsys.readouterr()
        after = snapshot(work)
    assert exit_code == code, captured
    assert "Traceback" not in captured.err
    lines = captured.err.splitlines()
    assert lines[:-1] == [f"benchkill: warning: {w}" for w in warnings], captured.err
    assert lines[-1].startswith("benchkill: error: "), lines[-1]
    assert fragment in lines[-1], lines[-1]
    assert after == before  # nothing changed, nothing created
    assert fake_suite.calls == []  # and nothing measured


@pytest.mark.parametrize("what,argv,fragment", MATRIX, ids=[row[0] for row in MATRIX])
def test_bad_input(what, argv, fragment, template, tmp_path, monkeypatch, capsys, fake_suite):
    os.mkfifo(tmp_path / "fifo.py")  # beside the workspace: copying a FIFO would block
    with open(tmp_path / "huge.py", "wb") as f:
        f.truncate(MAX_MODULE_BYTES + 1)  # sparse
    check(argv, 2, fragment, [], template, tmp_path / "w", monkeypatch, capsys, fake_suite)


@pytest.mark.parametrize(
    "what,argv,fragment,warnings", OLD_SPELLINGS, ids=[row[0] for row in OLD_SPELLINGS]
)
def test_bad_input_in_an_old_spelling(
    what, argv, fragment, warnings, template, tmp_path, monkeypatch, capsys, fake_suite
):
    check(argv, 2, fragment, warnings, template, tmp_path / "w", monkeypatch, capsys, fake_suite)


@pytest.mark.parametrize("what,argv,fragment", NOT_MEASURED, ids=[r[0] for r in NOT_MEASURED])
def test_good_input_not_measured(
    what, argv, fragment, template, tmp_path, monkeypatch, capsys, fake_suite
):
    check(argv, 3, fragment, [], template, tmp_path / "w", monkeypatch, capsys, fake_suite)


def test_report_of_a_file_whose_name_is_not_utf8(template, tmp_path, monkeypatch, capsys):
    """Not an error: the report names the file by its bytes, stdout shows U+FFFD."""
    name = os.fsdecode(b"run-\xff.json")
    (tmp_path / name).write_bytes((template / "a.json").read_bytes())
    monkeypatch.chdir(tmp_path)
    assert main(["report", name, "--out", "r.md"]) == 0
    assert capsys.readouterr().out.strip() == "r.md"
    assert b"run-\xff.json" in (tmp_path / "r.md").read_bytes()


def test_a_results_file_written_by_a_version_1_benchkill_is_no_input_error(tmp_path):
    """(the matrix's files are version 2; version 1 still loads)"""
    path = write_results(tmp_path / "v1.json")
    data = to_dict(make_results([make_record()]))
    data["schema_version"] = 1
    for r in data["records"]:
        del r["git_commit"], r["git_dirty"]
    path.write_text(json.dumps(data))
    assert main(["compare", str(path), str(path)]) == 0
