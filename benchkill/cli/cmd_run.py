"""``benchkill run``: run the benchmark suites and write a versioned results file.

The output (a new file, or the ``--resume`` file) is locked for the whole run
(:func:`benchkill.results.locking.exclusive`): a second run on it gets one line and exit
code 2.  A new file is created exclusively, so no run replaces another's file, and a
default file name carries the time to the microsecond.  ``--resume`` refuses a file
measured with other code (another git commit, a clean tree that is now dirty or the
reverse, another apache-tvm or apache-tvm-ffi, another Python release or build) unless
``--allow-code-change``; each record keeps the commit it was measured at either way.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path

from benchkill.bench import sharding
from benchkill.bench.machine import collect_machine
from benchkill.bench.model import EXPECTED_FAILURE, FAILED, RESUME_FIELDS, Machine, changed_fields
from benchkill.bench.runner import failed_records, make_progress, utc_now
from benchkill.bench.runner import run as run_suites
from benchkill.bench.suites import SUITES, load_suite
from benchkill.cli import common_args as common
from benchkill.cli.outputs import check_new_file, shown
from benchkill.errors import BenchkillError, ExitCode
from benchkill.execution.child import remove_stale_work_dirs
from benchkill.results.locking import Locked, exclusive
from benchkill.results.recorder import ResultsFile
from benchkill.results.store import CodeState, Results, RunSettings, load
from benchkill.vocabulary import SUITES as SUITE_TEXTS

#: What exit code 3 means here.
NOT_MEASURED = "a case failed (its error is in the results file and printed at the end)"
#: What ``run --help`` says of each suite: what it measures, its case counts (tests check
#: them against the suites' ``cases(quick)``) and its duration measured on this project's
#: 2-core machine (README, "Set-up").
SUITE_GUIDE = {
    "pass": {
        "what": SUITE_TEXTS["pass"],
        "quick_cases": 5,
        "quick_time": "10-15 s",
        "full_cases": 52,
        "full_what": "6 families x 7 sizes, 1k-600k bindings, 4 real decoders;\n"
        "         family real: 6 PyTorch models, with the [models] extra",
        "full_time": "11-17 min",
    },
    "vm": {
        "what": SUITE_TEXTS["vm"],
        "quick_cases": 9,
        "quick_time": "about 70 s",
        "full_cases": 31,
        "full_what": "7 workloads x 2 exec modes, calibration, naive, 14 real-model cases",
        "full_time": "about 13 min + 2 min per real-model case",
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
    common.add_quick(
        p, "small sizes and few repeats: checks that everything works in minutes; quote full runs"
    )
    common.add_out(
        p,
        "FILE",
        "results file to write, must not exist (default: results/<machine>/<UTC "
        "time>-<commit>.json, <machine> being this host's name)",
    )
    p.add_argument(
        "--resume",
        type=Path,
        metavar="FILE",
        help="finish an interrupted run: measure the cases missing from FILE and add them "
        "to it, with the suites and --quick of the original run (default: a new run)",
    )
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: measure the cases that failed again (their old records go)",
    )
    p.add_argument(
        "--allow-code-change",
        action="store_true",
        help="with --resume: continue even though the code changed since the file was "
        "measured (each record keeps its own commit; compare and report show the mix)",
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
    common.add_shard(p, "case of each suite")


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
    """results/<machine>/<UTC time to the microsecond>-<short commit or nogit>.json,
    relative to cwd."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S.%fZ")
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
    suites = sharding.sharded(_load_suites(results.settings.suites), results.settings, args)
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


def _code(state: CodeState) -> str:
    commit, dirty = state
    return (commit or "no git commit") + (" (dirty)" if dirty else "")


def _check_code(path: Path, results: Results, machine: Machine, allow: bool) -> None:
    """Refuse to resume ``results`` with another commit or RESUME_FIELDS, unless ``allow``."""
    now = (machine.git_commit, machine.git_dirty)
    start = (results.machine.git_commit, results.machine.git_dirty)
    then = [s for s in dict.fromkeys((start, *results.code_states)) if s != now]
    software = changed_fields(RESUME_FIELDS, results.machine, machine)
    changes = [f"commit {', '.join(map(_code, then))}"] if then else []
    changes += [f"{name} {old}" for name, old, _ in software]
    if not changes:
        return
    now_text = ", ".join([_code(now), *(f"{name} {new}" for name, _, new in software)])
    if not allow:
        raise BenchkillError(
            f"{path}: measured with {' and '.join(changes)}, the code now is {now_text}; "
            "resuming would mix records of two versions of the code or the software it "
            "runs on (--allow-code-change does, each record keeping its own commit)"
        )
    print(
        f"benchkill: warning: {path} was measured with {' and '.join(changes)}; the cases "
        f"measured now are recorded with {now_text}",
        file=sys.stderr,
    )


def _resumed(args: argparse.Namespace, machine: Machine) -> Results:
    """The results of ``--resume`` to continue (read with the file locked)."""
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
    _check_code(args.resume, results, machine, args.allow_code_change)
    if args.retry_failed:
        results = results.without_cases({r.case for r in results.records if r.status == FAILED})
    settings = RunSettings(
        suites=settings.suites,
        quick=settings.quick,
        command=settings.command,
        started_at=settings.started_at,
        finished_at=None,
        resumed_at=settings.resumed_at + (utc_now(),),
    )
    # the machine stays the one the run started on; each record carries its own commit
    return Results(results.machine, settings, results.cases, results.records)


def _claim_default(machine: Machine, stack: ExitStack) -> Path:
    """A default path no other run has, locked (names differ by the microsecond)."""
    for _ in range(100):
        path = default_path(machine)
        try:
            stack.enter_context(exclusive(path, create_dir=True))
        except Locked:
            continue
        if not path.exists():
            return path
        stack.close()
    raise BenchkillError(f"{path.parent}: found no free results file name")


def _options(args: argparse.Namespace) -> None:
    if args.resume is None:
        for flag, given in (
            ("--retry-failed", args.retry_failed),
            ("--allow-code-change", args.allow_code_change),
        ):
            if given:
                raise BenchkillError(f"{flag} applies to a resumed run; give --resume PATH")
    elif args.out is not None:
        raise BenchkillError("--resume writes back to its own file; do not give --out")


def _prepare(args: argparse.Namespace, stack: ExitStack) -> tuple[ResultsFile, list]:
    """The results file to fill, locked in ``stack``, and the suites to run; every option
    and file is checked before anything is written."""
    _options(args)
    machine = collect_machine()
    code = (machine.git_commit, machine.git_dirty)
    if args.resume is not None:
        load(args.resume)  # a missing or broken file is reported before any lock file
        stack.enter_context(exclusive(args.resume))
        results = _resumed(args, machine)  # read again, now that no run can change it
        suites = _load_suites(results.settings.suites)
        return ResultsFile(results, args.resume, code), suites
    names = suite_names("all" if args.suite is None else args.suite)
    quick = bool(args.quick)
    suites = _load_suites(names)
    settings = RunSettings(
        suites=names,
        quick=quick,
        command=_command(names, quick, _counting_flag(args)) + sharding.flag(args.shard),
        started_at=utc_now(),
    )
    if args.out is not None:
        check_new_file(args.out)
        stack.enter_context(exclusive(args.out, create_dir=True))
        path = args.out
    else:
        path = _claim_default(machine, stack)
    return ResultsFile(Results(machine, settings), path, code, create=True), suites


def run(args: argparse.Namespace) -> int:
    remove_stale_work_dirs()  # of runs killed before they could remove them
    with ExitStack() as stack:
        sink, suites = _prepare(args, stack)
        suites = _counting(args, sink.results)
        path = shown(sink.path)
        try:
            results = run_suites(suites, sink, make_progress(sys.stderr))
        except KeyboardInterrupt:
            print(
                f"benchkill: interrupted; finished cases are kept in {path}; "
                f"complete them with: benchkill run --resume {path}",
                file=sys.stderr,
            )
            return ExitCode.INTERRUPTED
    failed = failed_records(results.records)
    print(run_summary(results, sink.path))
    if failed:
        print(f"{len(failed)} record(s) failed unexpectedly:", file=sys.stderr)
        for r in failed:
            print(f"  {r.case} {r.metric}: {r.error}", file=sys.stderr)
        return ExitCode.NOT_MEASURED
    return ExitCode.OK


# --- the closing summary -------------------------------------------------------------
#: Where the committed baseline results live (relative to the checkout).
BASELINE_GLOB = "results/baseline-*/*.json"


def _sharing_a_suite(candidate: Path, results: Results) -> Results | None:
    """``candidate``'s results if it ran one of the suites of ``results``."""
    try:
        other = load(candidate)
    except BenchkillError:  # not a benchkill results file
        return None
    return other if set(other.settings.suites) & set(results.settings.suites) else None


def _others(path: Path, results: Results) -> list[Path]:
    """Results files to compare with: the newest earlier run of a common suite here, else
    per baseline directory its newest file of a common suite (names start with the UTC
    time), of this run's CPU when there are some (another CPU's figures do not compare)."""
    earlier = sorted((p for p in path.parent.glob("*.json") if p.name < path.name), reverse=True)
    if previous := next((p for p in earlier if _sharing_a_suite(p, results)), None):
        return [previous]
    found = ((p, _sharing_a_suite(p, results)) for p in sorted(Path().glob(BASELINE_GLOB)))
    newest = {p.parent: (p, other) for p, other in found if other}  # the later name stays
    cpu = results.machine.cpu_model
    same_cpu = [p for p, other in newest.values() if cpu and other.machine.cpu_model == cpu]
    return same_cpu or [p for p, _ in newest.values()]


def run_summary(results: Results, path: Path) -> str:
    """What ``benchkill run`` prints at the end: the file, the headline figures, the
    failures, and the commands to try next."""
    from benchkill.bench.runner import clock_text
    from benchkill.reporting.headline import summary_lines

    seconds = sum(c.seconds for c in results.cases)
    others = _others(path, results)
    path = shown(path)  # printable, also when the name is not UTF-8
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
    if others:
        lines.append("  # what changed since the run before (exit 1 on a regression):")
    lines += [f"  benchkill compare {shown(other)} {path}" for other in others]
    return "\n".join(lines)
