"""``benchkill run``: run the benchmark suites and write a versioned results file."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from benchkill.bench.machine import collect_machine
from benchkill.bench.model import Machine
from benchkill.bench.runner import failed_records, make_progress, utc_now
from benchkill.bench.runner import run as run_suites
from benchkill.bench.suites import SUITES, load_suite
from benchkill.errors import BenchkillError
from benchkill.results.recorder import ResultsFile
from benchkill.results.store import Results, RunSettings, load


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the benchmark suites and save every finished case to a results file "
        "(results/<machine>/<UTC time>-<commit>.json by default).  Exit code 1 when a case "
        "failed unexpectedly."
    )
    p.add_argument(
        "--suite",
        default=None,
        help=f"suite to run: {', '.join(SUITES)} or all (default: all; comma-separated list ok)",
    )
    p.add_argument("--quick", action="store_true", default=None, help="small sizes, few repeats")
    p.add_argument("--out", type=Path, help="results file to write (must not exist)")
    p.add_argument(
        "--resume", type=Path, metavar="PATH", help="complete an interrupted results file"
    )
    p.add_argument(
        "--instructions",
        action="store_true",
        help="pass suite: also count each pass application's instructions under valgrind "
        "(exact from run to run: pass_instructions, instructions_vs_tvm)",
    )
    p.add_argument(
        "--instructions-only", action="store_true", help="pass suite: the counts without timing"
    )


def suite_names(spec: str) -> tuple[str, ...]:
    """``"all"`` or a comma-separated list -> suite names, in order, without repeats."""
    names: list[str] = []
    for part in spec.split(","):
        part = part.strip()
        for name in SUITES if part == "all" else [part]:
            if name not in names:
                names.append(name)
    if not names or "" in names:
        raise BenchkillError(f"--suite {spec!r}: no suite named")
    return tuple(names)


def _load_suites(names: tuple[str, ...]) -> list:
    modules = []
    for name in names:
        try:
            modules.append(load_suite(name))
        except ModuleNotFoundError as exc:
            if exc.name != SUITES.get(name):
                raise
            raise BenchkillError(f"suite {name!r} is not available ({exc.name} missing)") from None
    return modules


def default_path(machine: Machine, now: datetime | None = None) -> Path:
    """results/<machine>/<UTC timestamp>-<short commit or nogit>.json, relative to cwd."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    return Path("results") / machine.name / f"{stamp}-{machine.git_commit or 'nogit'}.json"


def _command(names: tuple[str, ...], quick: bool, counting: str = "") -> tuple[str, ...]:
    return (
        ("benchkill", "run", "--suite", ",".join(names))
        + (("--quick",) if quick else ())
        + ((counting,) if counting else ())
    )


def _counting_flag(args: argparse.Namespace) -> str:
    if args.instructions_only:
        return "--instructions-only"
    return "--instructions" if args.instructions else ""


def _counting(args: argparse.Namespace, results: Results) -> list:
    """The suites, the pass suite counting instructions with --instructions[-only] (a
    resumed run keeps its own choice); valgrind is checked before any file is made."""
    suites = _load_suites(results.settings.suites)
    flags = ("--instructions-only", "--instructions")
    given = _counting_flag(args)
    counting = next((f for f in flags if f in results.settings.command), None)
    if args.resume is not None and given and given != counting:
        raise BenchkillError(f"{args.resume}: was not run with {given}")
    if counting is None:
        return suites
    if "pass" not in results.settings.suites:
        raise BenchkillError(f"{counting} counts the pass suite: add --suite pass")
    from benchkill.bench.instruction_records import CountingSuite
    from benchkill.bench.instructions import find_instrument

    find_instrument()
    only = counting == "--instructions-only"
    return [CountingSuite(s, only) if s.NAME == "pass" else s for s in suites]


def _prepare(args: argparse.Namespace) -> tuple[Results, Path]:
    """The results to continue and where they go; checks options before touching files."""
    machine = collect_machine()
    if args.resume is not None:
        if args.out is not None:
            raise BenchkillError("--resume writes back to its own file; do not give --out")
        results = load(args.resume)
        settings = results.settings
        if args.suite is not None and suite_names(args.suite) != settings.suites:
            raise BenchkillError(
                f"{args.resume}: was run with --suite {','.join(settings.suites)}, not {args.suite}"
            )
        if args.quick and not settings.quick:
            raise BenchkillError(f"{args.resume}: was not run with --quick")
        if results.machine.name != machine.name:
            raise BenchkillError(
                f"{args.resume}: measured on machine {results.machine.name!r}, "
                f"this is {machine.name!r}; results of two machines must not be mixed"
            )
        settings = RunSettings(
            suites=settings.suites,
            quick=settings.quick,
            command=settings.command,
            started_at=settings.started_at,
            finished_at=None,
            resumed_at=settings.resumed_at + (utc_now(),),
        )
        return Results(machine, settings, results.cases, results.records), args.resume
    names = suite_names(args.suite or "all")
    quick = bool(args.quick)
    path = args.out if args.out is not None else default_path(machine)
    if path.exists():
        raise BenchkillError(f"{path}: already exists; choose another --out or use --resume")
    command = _command(names, quick, _counting_flag(args))
    settings = RunSettings(suites=names, quick=quick, command=command, started_at=utc_now())
    return Results(machine, settings), path


def run(args: argparse.Namespace) -> int:
    results, path = _prepare(args)
    suites = _counting(args, results)
    try:
        results = run_suites(suites, ResultsFile(results, path), make_progress(sys.stderr))
    except KeyboardInterrupt:
        print(
            f"benchkill: interrupted; finished cases are kept in {path}; "
            f"complete them with: benchkill run --resume {path}",
            file=sys.stderr,
        )
        return 130
    failed = failed_records(results.records)
    print(f"wrote {path} ({len(results.cases)} cases, {len(results.records)} records)")
    if failed:
        print(f"{len(failed)} record(s) failed unexpectedly:", file=sys.stderr)
        for r in failed:
            print(f"  {r.case} {r.metric}: {r.error}", file=sys.stderr)
        return 1
    return 0
