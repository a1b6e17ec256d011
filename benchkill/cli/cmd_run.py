"""``benchkill run``: run the benchmark suites and write a versioned results file."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from benchkill.bench.machine import collect_machine
from benchkill.bench.model import EXPECTED_FAILURE, Machine
from benchkill.bench.runner import failed_records, make_progress, utc_now
from benchkill.bench.runner import run as run_suites
from benchkill.bench.suites import SUITES, load_suite
from benchkill.errors import BenchkillError
from benchkill.results.recorder import ResultsFile
from benchkill.results.store import Results, RunSettings, load

#: What ``run --help`` says of each suite: what it measures, its case counts (tests check
#: them against the suites' ``cases(quick)``) and its duration measured on this project's
#: 2-core machine (README, "Set-up").
SUITE_GUIDE = {
    "pass": {
        "what": "time of benchkill's pass, TVM's C++ pass and a naive port",
        "quick_cases": 4,
        "quick_time": "about 20 s",
        "full_cases": 42,
        "full_what": "6 families x 7 sizes, 1k-600k bindings",
        "full_time": "about 72 min",
    },
    "vm": {
        "what": "peak memory and run time of each kill variant on the Relax VM",
        "quick_cases": 6,
        "quick_time": "about 70 s",
        "full_cases": 13,
        "full_what": "5 workloads x 2 exec modes, calibration, naive allocator",
        "full_time": "about 5 min",
    },
}


def _suites_epilog() -> str:
    lines = ["suites (cases; time on 2 shared cores):"]
    for name, g in SUITE_GUIDE.items():
        lines += [
            f"  {name:5} {g['what']}",
            f"        --quick: {g['quick_cases']} cases, {g['quick_time']}",
            f"        full: {g['full_cases']} cases, {g['full_time']}",
            f"        ({g['full_what']})",
        ]
    lines += [
        "",
        "examples:",
        "  benchkill run --quick             # both suites, small sizes",
        "  benchkill run --suite vm          # one suite in full",
        "  benchkill run --resume results/<machine>/<file>.json",
        "",
        "Exit code 0: every case ran; 1: a case failed unexpectedly (its error is in the",
        "file and printed at the end); 2: bad input; 130: interrupted (finished cases kept).",
    ]
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the benchmark suites and save every finished case to a results file at once, "
        "so Ctrl-C or a crash loses nothing measured.  A case that fails is recorded with "
        "its error and the run goes on.  At the end it prints the headline figures "
        "(speedup over TVM, memory saved by kills, targets met) and the commands to try next."
    )
    p.epilog = _suites_epilog()
    p.add_argument(
        "--suite",
        default=None,
        metavar="SUITE",
        help=f"{', '.join(SUITES)}, all, or a comma-separated list (default: all)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        default=None,
        help="small sizes and few repeats: checks that everything works in minutes; "
        "quote full runs",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="results file to write, must not exist (default: results/<machine>/<UTC "
        "time>-<commit>.json, <machine> being this host's name)",
    )
    p.add_argument(
        "--resume",
        type=Path,
        metavar="FILE",
        help="finish an interrupted run: measure the cases missing from FILE and add them "
        "to it, with the suites and --quick of the original run (default: a new run)",
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


def _command(names: tuple[str, ...], quick: bool) -> tuple[str, ...]:
    return ("benchkill", "run", "--suite", ",".join(names)) + (("--quick",) if quick else ())


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
    settings = RunSettings(
        suites=names, quick=quick, command=_command(names, quick), started_at=utc_now()
    )
    return Results(machine, settings), path


def run(args: argparse.Namespace) -> int:
    results, path = _prepare(args)
    suites = _load_suites(results.settings.suites)
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
    print(run_summary(results, path))
    if failed:
        print(f"{len(failed)} record(s) failed unexpectedly:", file=sys.stderr)
        for r in failed:
            print(f"  {r.case} {r.metric}: {r.error}", file=sys.stderr)
        return 1
    return 0


# --- the closing summary -------------------------------------------------------------

#: Where the committed baseline results live (relative to the checkout).
BASELINE_GLOB = "results/baseline-*/*.json"


def _shares_a_suite(candidate: Path, results: Results) -> bool:
    try:
        suites = load(candidate).settings.suites
    except BenchkillError:
        return False  # not a benchkill results file
    return bool(set(suites) & set(results.settings.suites))


def _others(path: Path, results: Results) -> list[Path]:
    """Results files to compare with: the newest earlier run of a common suite in the
    same directory, else the committed baseline files of the same suites."""
    earlier = sorted((p for p in path.parent.glob("*.json") if p.name < path.name), reverse=True)
    for candidate in earlier:
        if _shares_a_suite(candidate, results):
            return [candidate]
    return [p for p in sorted(Path().glob(BASELINE_GLOB)) if _shares_a_suite(p, results)]


def run_summary(results: Results, path: Path) -> str:
    """What ``benchkill run`` prints at the end: the file, the headline figures, the
    failures, and the commands to try next."""
    from benchkill.bench.runner import clock_text
    from benchkill.reporting.headline import summary_lines

    seconds = sum(c.seconds for c in results.cases)
    lines = [
        f"wrote {path} ({len(results.cases)} cases, {len(results.records)} records; "
        f"the cases took {clock_text(seconds)})"
    ]
    lines += summary_lines(results.records, results.settings.quick)
    failed = failed_records(results.records)
    expected = [r for r in results.records if r.status == EXPECTED_FAILURE]
    lines.append(
        f"failures: {len(failed)} unexpected"
        + (" (listed below)" if failed else "")
        + f", {len(expected)} expected (known TVM bugs, recorded as such)"
    )
    lines += [
        "next:",
        "  # the headline, the comparison, the figures and every table, in Markdown:",
        f"  benchkill report {path} --out report.md",
        "  # the figures alone (PNG and SVG):",
        f"  benchkill plot {path} --out figures",
    ]
    others = _others(path, results)
    if others:
        lines.append("  # what changed since the run before (exit 1 on a regression):")
    lines += [f"  benchkill compare {other} {path}" for other in others]
    return "\n".join(lines)
