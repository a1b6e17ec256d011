"""``benchkill equivalence``: TVM's KillAfterLastUse and benchkill's on every Relax module of
a set of files, each file in a child process (:mod:`benchkill.execution.child`).

Stages (what both passes are given, per module):

``as-written``
    the module as its file builds it;
``lowered``
    the module after the default build pipeline's passes that come before the kill step
    (:func:`benchkill.relax.lowering.before_kill`, for target ``llvm``), each applied on its
    own: a pass that raises on the module is skipped for it;
``rekilled``
    ``lowered`` plus TVM's KillAfterLastUse once (the input of a second kill pass).

Verdicts: ``equal`` (structurally, free variables mapped), ``both raise``, ``only TVM
raises``, ``only benchkill raises``, ``different``; the last three are mismatches.  Beside
the verdict, ``verify_kills`` looks for uses after a kill and double kills in every output
(TVM's, and benchkill's in its three modes).

The child (:func:`check_file`, entry point ``benchkill.execution.corpus_task:check_file``)
executes the file's top-level statements one by one in its own namespace (each may fail
alone, even with a BaseException such as the ``Skipped`` of a module-level
``pytest.importorskip``), builds each candidate (:mod:`benchkill.execution.corpus`), and
appends one JSON record per candidate to ``records.jsonl`` in its work directory as soon as
it is done, so a crash or a timeout loses only the candidate it was on: :func:`check_files`
runs the child again after it, with that candidate recorded as the crash (or, when the
child timed out, as the hang if it finished no candidate in that run).
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import json
import os
import sys
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchkill.errors import BenchkillError, one_line
from benchkill.execution import corpus
from benchkill.execution.child import (
    error_text,
    kill_running_children,
    run_task,
    set_stage,
    work_dir,
)
from benchkill.relax.text import MAX_MODULE_BYTES, check_regular_file
from benchkill.vocabulary import EQUIVALENCE_STAGES

STAGES = EQUIVALENCE_STAGES
VERDICTS = ("equal", "both raise", "only TVM raises", "only benchkill raises", "different")
MISMATCHES = VERDICTS[2:]
RECORDS = "records.jsonl"
_TASK = "benchkill.execution.corpus_task:check_file"
#: kill-rule violations counted as unsafe (the others concern missed or useless kills)
UNSAFE = ("use-after-kill", "double-kill")


# --- the parent's side -----------------------------------------------------------------------
def python_files(paths: list[Path]) -> list[Path]:
    """The files of ``paths``: a file as it is, a directory's ``*.py`` files, sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.py") if p.is_file()))
        else:
            found.append(path)
    return found


def candidates_of(path: Path) -> tuple[list[corpus.Candidate], str | None]:
    """The candidates of one file, or the reason it cannot be read (not a regular file,
    or larger than a module file may be: :func:`benchkill.relax.text.check_regular_file`)."""
    try:
        check_regular_file(path, MAX_MODULE_BYTES, "a Python file")
    except BenchkillError as exc:
        return [], str(exc)
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        return [], error_text(exc)
    return corpus.find_candidates(tree), None


def check_files(
    files: list[Path],
    stages: tuple[str, ...],
    jobs: int = 1,
    timeout: float = 600.0,
    opt_level: int | None = None,
    diffs: bool = False,
    progress=None,
) -> list[dict[str, Any]]:
    """One record per candidate of ``files`` (those without any are skipped), in file order.

    An interruption (Ctrl-C, or SIGTERM through the command line) kills the running
    children and stops at once.
    """
    work = [(f, c) for f in files for c in [candidates_of(f)[0]] if c]
    stop = threading.Event()

    def one(job):
        path, cands = job
        records = _check_file(path, cands, stages, timeout, opt_level, diffs, stop)
        if progress is not None and not stop.is_set():
            progress(path, records)
        return records

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = [pool.submit(one, job) for job in work]
        results = [future.result() for future in futures]
    except BaseException:
        stop.set()
        kill_running_children()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return [record for records in results for record in records]


def _check_file(path, cands, stages, timeout, opt_level, diffs, stop) -> list[dict[str, Any]]:
    """Every candidate of one file: the child is run again after the candidates it finished
    until none is left; the candidate it was on is given up when it crashed there, or when
    it timed out without finishing any (each run makes progress)."""
    done: dict[tuple, dict] = {}
    keys = [c.key for c in cands]
    left = keys
    while left and not stop.is_set():
        request = {
            "file": str(Path(path).resolve()),
            "stages": list(stages),
            "skip": [list(k) for k in done],
            "opt_level": opt_level,
            "diffs": diffs,
        }
        with work_dir("benchkill-corpus-") as work:
            outcome = run_task(_TASK, request, work, timeout, torch=True)
            lines = (work / RECORDS).read_text().splitlines() if (work / RECORDS).exists() else []
        for line in lines:
            record = json.loads(line)
            record["file"] = str(path)  # as the caller named it
            done[(record["name"], record["line"])] = record
        left = [k for k in keys if k not in done]
        if not left or stop.is_set():
            break
        if outcome.ok and outcome.result is not None:  # the task returned (maybe an error)
            error = outcome.result.get("error", "the child skipped it")
            done.update((k, _record(path, k, error=error)) for k in left)
            break
        if outcome.timed_out and lines:
            continue  # slow, not stuck: run again on the rest
        # the candidate the child was on (its stage) is the one that crashed or hung
        at = next((k for k in left if f"{k[0]}:{k[1]}" == outcome.stage), left[0])
        done[at] = _record(path, at, error=outcome.failure())
        left = [k for k in keys if k not in done]
    return [done.get(k) or _record(path, k, error="interrupted") for k in keys]


def _record(path, key, **extra) -> dict[str, Any]:
    return {"file": str(path), "name": key[0], "line": key[1], "parsed": False, **extra}


# --- the child's side ------------------------------------------------------------------------
def check_file(request: dict[str, Any], work: Path) -> dict[str, Any]:
    """Entry point of the child: every candidate of ``request["file"]`` (see the module
    docstring); records go to ``work / records.jsonl``."""
    path = request["file"]
    os.chdir(work)  # what the file writes stays in the work directory
    sys.setrecursionlimit(10000)
    tree = ast.parse(Path(path).read_bytes(), filename=path)
    cands = corpus.find_candidates(tree)
    skip = {tuple(k) for k in request["skip"]}
    namespace, failed = _execute(path, tree)
    parameters = corpus.module_parameters(tree)
    sink = open(work / RECORDS, "a")  # noqa: SIM115 - one line per candidate, flushed
    with sink:
        for cand in cands:
            if cand.key in skip:
                continue
            set_stage(work, f"{cand.qualname}:{cand.line}")
            start = time.perf_counter()
            record = {"file": path, "name": cand.qualname, "line": cand.line, "kind": cand.kind}
            try:
                mod = _build(cand, namespace, failed, parameters, path)
                record.update(parsed=True, **_stages(mod, request))
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - the candidate does not build
                # (the test file's code may raise pytest's Skipped, which is no Exception)
                record.update(parsed=False, error=error_text(exc))
            record["seconds"] = round(time.perf_counter() - start, 3)
            sink.write(json.dumps(record) + "\n")
            sink.flush()
    return {"candidates": len(cands)}


def _execute(path: str, tree: ast.Module) -> tuple[dict, dict]:
    """Run the file's top-level statements one by one; (namespace, statement -> error)."""
    import tvm
    from tvm import relax
    from tvm.script import ir as I  # noqa: N812 - TVMScript's names
    from tvm.script import relax as R  # noqa: N812
    from tvm.script import tirx as T  # noqa: N812

    name = "benchkill_corpus_" + Path(path).stem.replace("-", "_")
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module  # TVMScript reads the source through the module
    sys.path.insert(0, os.path.dirname(path))
    namespace = module.__dict__
    # a printed module's imports are comments: TVMScript's names are there already
    namespace.update({"I": I, "R": R, "T": T, "tvm": tvm, "relax": relax})
    failed = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test):
            continue
        try:
            exec(compile(ast.Module([stmt], []), path, "exec"), namespace)  # noqa: S102
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - recorded for the candidates it holds
            # pytest.importorskip at module level raises pytest's Skipped, a BaseException:
            # it fails its own statement, not the file
            failed[id(stmt)] = error_text(exc)
    return namespace, failed


def _build(cand: corpus.Candidate, namespace: dict, failed: dict, parameters: dict, path: str):
    import tvm
    from tvm import relax

    if not cand.nested:
        top = cand.ancestors[0] if cand.ancestors else cand.node
        if id(top) in failed:
            raise RuntimeError(failed[id(top)])
        names = cand.qualname.split(".")
        obj = namespace[names[0]]
        for name in names[1:]:
            obj = getattr(obj, name)
    else:
        module, accessor, outer = corpus.isolate(cand, parameters)
        missing = object()
        saved = namespace.get(outer, missing)
        try:
            exec(compile(module, path, "exec"), namespace)  # noqa: S102
            obj = eval(compile(accessor, path, "eval"), namespace)  # noqa: S307
        finally:
            if saved is missing:
                namespace.pop(outer, None)
            else:
                namespace[outer] = saved
    if isinstance(obj, relax.Function):
        obj = tvm.IRModule({cand.node.name: obj})
    if not isinstance(obj, tvm.IRModule):
        raise TypeError(f"the decorated object is a {type(obj).__name__}, not an IRModule")
    return obj


def _stages(mod, request: dict[str, Any]) -> dict[str, Any]:
    from tvm import relax

    if not any(isinstance(f, relax.Function) for _, f in mod.functions_items()):
        return {"relax": False}
    out: dict[str, Any] = {"relax": True, "stages": {}}
    inputs = {"as-written": mod}
    if "lowered" in request["stages"] or "rekilled" in request["stages"]:
        inputs["lowered"], out["skipped_passes"] = _lowered(mod)
    if "rekilled" in request["stages"]:
        try:
            inputs["rekilled"] = relax.transform.KillAfterLastUse()(inputs["lowered"])
        except Exception as exc:  # noqa: BLE001 - no input for this stage
            out["stages"]["rekilled"] = {"verdict": None, "detail": error_text(exc)}
    for stage in request["stages"]:
        if stage in inputs:
            out["stages"][stage] = compare(inputs[stage], request["opt_level"], request["diffs"])
    return out


def check_module(
    mod, name: str, stages: tuple[str, ...], opt_level: int | None = None, diffs: bool = False
) -> dict[str, Any]:
    """The record of one module the caller holds (a model: :mod:`benchkill.inputs.sources`),
    checked here at each stage as a file's candidates are in a child."""
    request = {"stages": stages, "opt_level": opt_level, "diffs": diffs}
    return {"file": name, "line": 0, "name": "module", "parsed": True, **_stages(mod, request)}


def _lowered(mod):
    """``mod`` after each pass of :func:`before_kill` that does not raise on it."""
    import tvm

    from benchkill.relax.lowering import before_kill
    from benchkill.relax.native_log import tvm_log_captured

    skipped = []
    with tvm.target.Target("llvm"), tvm_log_captured():
        for step in before_kill():
            try:
                mod = step(mod)
            except Exception:  # noqa: BLE001 - skipped for this module, as documented
                skipped.append(step.info.name)
    return mod, skipped


def compare(mod, opt_level: int | None = None, diffs: bool = False) -> dict[str, Any]:
    """The verdict of TVM's and benchkill's pass on ``mod`` (in ``PassContext(opt_level)``
    when one is given), and the unsafe kills ``verify_kills`` finds in each output."""
    import tvm
    import tvm_ffi
    from tvm import relax

    import benchkill

    passes = {
        "tvm": relax.transform.KillAfterLastUse(),
        "benchkill": benchkill.KillAfterLastUse(),
        "beyond": benchkill.KillAfterLastUse(tvm_compatible=False),
        "legacy": benchkill.KillAfterLastUse(exclude_null_value=False),
    }
    context = (
        tvm.transform.PassContext(opt_level=opt_level)
        if opt_level is not None
        else contextlib.nullcontext()
    )
    outputs, errors = {}, {}
    with context:
        for name, kill in passes.items():
            try:
                outputs[name] = kill(mod)
            except Exception as exc:  # noqa: BLE001 - a verdict, not a failure
                errors[name] = error_text(exc)
    tvm_out, ours = outputs.get("tvm"), outputs.get("benchkill")
    record: dict[str, Any] = {"errors": errors}
    if tvm_out is None and ours is None:
        record["verdict"] = "both raise"
    elif tvm_out is None or ours is None:
        record["verdict"] = "only TVM raises" if ours is not None else "only benchkill raises"
    elif tvm_ffi.structural_equal(tvm_out, ours, map_free_vars=True):
        record["verdict"] = "equal"
    else:
        record["verdict"] = "different"
        record["detail"] = _first_difference(ours, tvm_out)
        if diffs:
            record["diff"] = "".join(
                difflib.unified_diff(
                    tvm_out.script().splitlines(True),
                    ours.script().splitlines(True),
                    "TVM",
                    "benchkill",
                )
            )
    record["unsafe"], record["verify_errors"] = {}, {}
    for name, out in outputs.items():
        try:
            record["unsafe"][name] = _unsafe(out)
        except Exception as exc:  # noqa: BLE001 - the verifier cannot read this IR
            record["verify_errors"][name] = error_text(exc)
    return record


def _first_difference(a, b) -> str:
    import tvm

    try:
        tvm.ir.assert_structural_equal(a, b, map_free_vars=True)
    except ValueError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        where = next((ln for ln in lines if ln.startswith("Access path:")), lines[0])
        return one_line(where)
    return ""


def _unsafe(mod) -> list[str]:
    """The unsafe kills (:data:`UNSAFE`) ``verify_kills`` reports in ``mod``."""
    from benchkill.analysis.verifier import verify_kills

    return [f"{v.rule} {v.variable}" for v in verify_kills(mod) if v.rule in UNSAFE]
