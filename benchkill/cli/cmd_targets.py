"""``benchkill targets RESULTS...``: the target figures of results files, each met or not."""

from __future__ import annotations

import argparse

from benchkill.bench.model import OK
from benchkill.cli import common_args as common
from benchkill.errors import BenchkillError, MeasurementError
from benchkill.reporting.formatting import run_line
from benchkill.reporting.targets import format_targets, pass_targets, vm_targets
from benchkill.results.loading import load_any

NOT_MEASURED = "no target figure could be computed: every measurement it needs failed"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Compute the target figures of the pass and VM suites from results files (the "
        "records of all files together) and print them as Markdown tables, each with "
        "whether it is met.  Pass suite, in CPU time where the records have it (else wall "
        "time), the least sample of each side: benchkill / TVM of every family at 3,000 "
        "bindings (target <= 0.3), at every size from 30,000 on (<= 0.33; chain at 200,000: "
        "<= 0.15) and at every size of the model family (<= 0.5), each with benchkill / "
        "floor beside it where the run timed the floor; naive / benchkill where the naive "
        "port ran; the scaling exponent of each implementation per family from 3,000 to "
        "600,000 bindings (benchkill's <= 1.0).  VM suite, per workload, exec mode and "
        "allocator, ratios of medians: peak over the liveness bound, peak without kills "
        "over peak with them, benchkill over TVM, beyond over TVM, the run time with kills "
        "over without, compiled over bytecode; on the chain and symbolic_chain workloads "
        "peak / bound <= 1.10 and no kills / kills >= 6.  A size a run did not measure "
        "shows as n/a (a --quick run has only the 3,000-binding one).  Above the tables, "
        "one line per file says what measured it (CPU, Python and its build, packages): "
        "the ratios depend on both."
    )
    p.epilog = "example:\n  benchkill targets results/baseline-2core-vm/*.json"
    common.add_results(p)


def run(args: argparse.Namespace) -> int:
    runs = [(path, load_any(path)) for path in args.results]
    records = [r for _, results in runs for r in results.records]
    text = format_targets(records)
    computed = any(row["value"] is not None for row in pass_targets(records)) or any(
        len(row) > 4
        for row in vm_targets(records)  # a figure beside the row's keys and met
    )
    if not computed:
        failed = [r for r in records if r.suite in ("pass", "vm") and r.status != OK]
        if failed:  # the input has the measurements; they failed (exit code 3)
            raise MeasurementError(
                f"no target figure could be computed: {len(failed)} pass or vm "
                "measurement(s) failed"
            )
        raise BenchkillError("no pass or vm records a target figure is computed from")
    # the ratios depend on the CPU and the interpreter's build (README "The interpreter")
    print("\n".join(run_line(path, r) for path, r in runs) + "\n")
    print(text)
    return 0
