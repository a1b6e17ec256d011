"""``benchkill equivalence PATH...``: TVM's KillAfterLastUse and benchkill's on every Relax
module of some files, or on a model (``--model``, ``--torch``, ``--onnx``), exit 1 on any
mismatch."""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from benchkill.cli import args as types
from benchkill.cli import common_args as common
from benchkill.cli import deprecation
from benchkill.errors import BenchkillError, MeasurementError
from benchkill.vocabulary import EQUIVALENCE_STAGES as STAGES
from benchkill.vocabulary import KILL_PASSES

#: The kill variants that run benchkill's pass (its modes), and TVM's.
OURS = tuple(k for k in KILL_PASSES if k != "tvm")

#: What exit codes 1 and 3 mean here.
BAD_ANSWER = "only one pass raises, or their outputs differ (a mismatch)"
NOT_MEASURED = "no Relax module found in the files, or a diff could not be written"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Find the Relax modules of TVMScript and Python test files (classes decorated "
        "@I.ir_module, free @R.function; each file run in a child process, with a timeout) "
        "and run TVM's KillAfterLastUse and benchkill's on each, at each stage: as written, "
        "lowered (the default pipeline's passes before the kill step; a pass that raises "
        "is skipped), rekilled (lowered plus TVM's pass once).  Prints a table and one line "
        "per mismatch (only one raises, or different outputs).  A module passes when both "
        "give equal outputs or both raise."
    )
    p.epilog = (
        "examples:\n  benchkill equivalence tvm/tests/python/relax --jobs 2 --out diffs\n"
        "  benchkill equivalence --onnx model.onnx --dynamic x:0   # in this process"
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files, or directories (*.py); or give a model instead",
    )
    common.add_models(p, p.add_mutually_exclusive_group(), instead="PATHs")
    p.add_argument(
        "--stages",
        type=types.comma_list(STAGES),
        default=STAGES,
        help="comma-separated stages",
    )
    p.add_argument(
        "--jobs", type=types.positive_int, default=1, metavar="N", help="files checked at once"
    )
    p.add_argument(
        "--timeout",
        type=types.timeout_seconds,
        default=900.0,
        metavar="SECONDS",
        help="seconds per child process (a file's run is restarted after one that hangs)",
    )
    p.add_argument(
        "--opt-level",
        type=types.non_negative_int,
        default=None,
        metavar="N",
        help="run both passes inside PassContext(opt_level=N) (default: no context)",
    )
    out = common.add_out(
        p, "DIR", "write a diff of each different output into DIR (default: write none)"
    )
    deprecation.alias(p, out, "--diffs")
    common.add_shard(p, "file (in sorted order)")


def run(args: argparse.Namespace) -> int:
    from benchkill.cli.outputs import check_directory, shown
    from benchkill.execution.corpus_task import check_files, python_files
    from benchkill.relax.text import MAX_MODULE_BYTES, check_regular_file

    source = common.source_of(args)
    if (source == "file") == (not args.paths):
        raise BenchkillError("give PATHs or one of --model, --torch, --onnx (not both)")
    if source == "file" and args.dynamic:
        raise BenchkillError("--dynamic applies to --torch and --onnx")
    paths = [Path(p) for p in args.paths]
    for path in paths:
        if not path.exists():
            raise BenchkillError(f"{shown(path)}: no such file or directory")
        if not path.is_dir():
            check_regular_file(path, MAX_MODULE_BYTES, "a Python file")
    if args.out:
        check_directory(Path(args.out), paths, "diffs")
    if source != "file":
        return _model(args)
    from benchkill.bench.sharding import select

    files = select(python_files(paths), args.shard)
    total = len(files)
    seen = [0]

    def progress(path, records) -> None:
        seen[0] += 1
        print(f"[{seen[0]}] {shown(path)}: {len(records)} candidates", file=sys.stderr, flush=True)

    records = check_files(
        files, args.stages, args.jobs, args.timeout, args.opt_level, bool(args.out), progress
    )
    if not records:
        raise MeasurementError(f"no Relax modules found in {', '.join(map(shown, paths))}")
    mismatches = _report(records, args.stages, total)
    if args.out:
        _write_diffs(Path(args.out), records)
    return 1 if mismatches else 0


def _model(args: argparse.Namespace) -> int:
    """Both passes on a model's module at each stage, in this process."""
    from benchkill.execution.corpus_task import check_module

    workload = common.model_of(args)
    record = check_module(workload.mod, workload.name, args.stages, args.opt_level, bool(args.out))
    mismatches = _report([record], args.stages, 1)
    if args.out:
        _write_diffs(Path(args.out), [record])
    return 1 if mismatches else 0


def _report(records: list[dict], stages: tuple[str, ...], total: int) -> int:
    from benchkill.cli.outputs import shown
    from benchkill.execution.corpus_task import MISMATCHES, VERDICTS

    built = [r for r in records if r.get("parsed")]
    relax = [r for r in built if r.get("relax")]
    files = len({r["file"] for r in records})
    print(
        f"equivalence: {total} files, {files} with candidates: {len(records)} candidates, "
        f"{len(built)} built ({len(relax)} with a Relax function), "
        f"{len(records) - len(built)} not built"
    )
    head = ["stage", "modules", *VERDICTS, "no input", "unsafe kills (benchkill/TVM)"]
    rows = []
    mismatches = 0
    lines = []
    for stage in stages:
        results = [(r, r["stages"][stage]) for r in relax if stage in r.get("stages", {})]
        verdicts = Counter(s["verdict"] for _, s in results)
        ours = sum(1 for _, s in results if _has_unsafe(s, OURS))
        theirs = sum(1 for _, s in results if _has_unsafe(s, ("tvm",)))
        rows.append(
            [stage, len(results), *(verdicts[v] for v in VERDICTS), verdicts[None]]
            + [f"{ours}/{theirs}"]
        )
        for record, result in results:
            where = f"{stage} {shown(record['file'])}:{record['line']} {record['name']}"
            if result["verdict"] in MISMATCHES:
                mismatches += 1
                lines.append(f"MISMATCH {where}: {result['verdict']}: {_why(result)}")
            for mode, error in result.get("errors", {}).items():
                if mode in OURS and mode != "benchkill" and "benchkill" not in result["errors"]:
                    lines.append(f"NOTE {where}: {mode} mode raised: {error}")
            for mode in OURS:
                for kill in result.get("unsafe", {}).get(mode, ()):
                    lines.append(f"UNSAFE {where}: {mode} output: {kill}")
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
    for row in (head, *rows):
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip())
    for line in lines:
        print(line)
    print(f"{mismatches} mismatch(es)")
    return mismatches


def _has_unsafe(result: dict, modes: tuple[str, ...]) -> bool:
    return any(result.get("unsafe", {}).get(m) for m in modes)


def _why(result: dict) -> str:
    if result["verdict"] == "different":
        return result.get("detail", "")
    errors = result.get("errors", {})
    return errors.get("tvm") or errors.get("benchkill") or ""


def _write_diffs(directory: Path, records: list[dict]) -> None:
    """One file per different output, never over an existing file."""
    from benchkill.cli.outputs import writing

    diffs = [
        (f"{Path(record['file']).stem}-{record['name']}-{record['line']}-{stage}", r["diff"])
        for record in records
        for stage, r in record.get("stages", {}).items()
        if r.get("diff") is not None
    ]
    if not diffs:
        return
    with writing(directory, "write into it", exact=False):
        directory.mkdir(parents=True, exist_ok=True)
        for stem, text in diffs:
            _create(directory, re.sub(r"[^\w.-]", "_", stem), text)


def _create(directory: Path, stem: str, text: str) -> None:
    for n in range(1, 10000):
        path = directory / (f"{stem}.diff" if n == 1 else f"{stem}-{n}.diff")
        try:
            with open(path, "x") as f:
                f.write(text)
            return
        except FileExistsError:
            continue
    raise BenchkillError(f"{directory}: too many diffs named {stem}")
