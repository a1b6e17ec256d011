"""``benchkill memory``: who holds the peak, and what each kill variant wastes.

For one module (a TVMScript file, a registered workload, or a model from the user's
Python, PyTorch or ONNX) and each kill variant and exec mode: the measured peak of a run
(:func:`benchkill.measure_vm`), the allocation trace of one more run replayed through the
allocator model, the static liveness bound (:func:`benchkill.estimate_memory`), the
largest holders of the peak (variable, bytes, where defined, last used and released,
killed or why not) and the waste table (bytes held after their last use times the bindings
they were held, per function). A model's outputs are checked against its framework's (exit
1 on a mismatch).
"""

from __future__ import annotations

import argparse
from typing import Any

from benchkill.errors import BenchkillError, MeasurementError, one_line
from benchkill.vocabulary import COMPARED_KILLS, KILLS, kill_arg

MiB = float(1 << 20)
#: What exit code 3 means here.
NOT_MEASURED = "a variant's build, run or trace failed (its error is printed)"
#: What exit code 1 means here.
BAD_ANSWER = "a model's outputs differ from its framework's (PyTorch's, onnxruntime's)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from benchkill.cli import args as types
    from benchkill.cli import common_args as common
    from benchkill.cli import deprecation
    from benchkill.inputs.workloads import WORKLOADS

    p.description = (
        "Measure, trace and explain the peak memory of a VM run for each kill variant: "
        "the peak, its largest holders (killed where, or never killed and why) and the "
        "bytes each variable holds after its last use.  Each variant is built and run "
        "in child processes (one measures, one traces)."
    )
    p.epilog = (
        common.kill_epilog(KILLS) + "\n\n"
        "examples:\n"
        "  benchkill memory --workload if_chain --quick --kill tvm beyond\n"
        "  benchkill memory model.py --set n=4096 --exec-mode bytecode compiled\n"
        "  benchkill memory --torch mypkg.models:resnet --dynamic x:0 --memory-cfg naive\n"
        "  benchkill memory --onnx model.onnx --dynamic x:0<=16\n"
        "  benchkill memory --model mypkg.relax_models:block"
    )
    source = common.module_source(p, "a high-level Relax module (TVMScript file)")
    common.add_workload(source, list(WORKLOADS))
    common.add_models(p, source)
    common.add_func(p, "to run")
    p.add_argument(
        "--set",
        type=types.assignment,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="FILE: a symbolic dimension's or a scalar parameter's value (repeatable)",
    )
    quick = common.add_quick(p, "--workload: its small size")
    deprecation.old_flag(p, "--full", quick.dest, None, "no option (full sizes are the default)")
    common.add_kill(p, several=True, choices=KILLS, default=COMPARED_KILLS)
    common.add_exec_modes(p)
    common.add_memory_cfg(p)
    repeats = common.add_repeats(p, 1, "measured peak runs of each variant")
    deprecation.alias(p, repeats, "--runs")
    p.add_argument("--top", type=types.positive_int, default=5, metavar="N", help="holders listed")
    p.add_argument(
        "--no-trace", action="store_true", help="measure and estimate only, trace no run"
    )


def _subject(args: argparse.Namespace) -> Any:
    from benchkill.cli import common_args as common
    from benchkill.inputs.workloads import Workload, make_workload

    source = common.source_of(args)
    if source != "file" and (args.set or args.function is not None):
        raise BenchkillError(f"--set and --func apply to FILE, not to --{source}")
    if args.quick and source != "workload":
        where = "FILE" if source == "file" else f"--{source}"
        raise BenchkillError(f"--quick applies to --workload, not to {where}")
    model = common.model_of(args)
    if model is not None:
        return model
    if args.workload:
        return make_workload(args.workload, quick=bool(args.quick))
    from benchkill.inputs.arguments import module_arguments
    from benchkill.relax.text import read_module

    mod = read_module(args.file)
    func = args.function or "main"
    inputs, shapes, used = module_arguments(mod, func, dict(args.set))
    note = ", ".join(f"{k}={v}" for k, v in used.items())
    return Workload(args.file, mod, tuple(inputs), func, shapes, description=note)


def _measure(workload: Any, mode: str, kill: str | None, args: argparse.Namespace) -> dict:
    from benchkill.execution.estimate import estimate_memory
    from benchkill.execution.vm_measure import VMOptions, measure_vm

    options = VMOptions(
        mode,
        args.memory_cfg,
        0,
        args.repeats,
        workload.func,
        timeline=False,
        rekill=workload.rekill,
    )
    result = measure_vm(
        workload.mod, list(workload.inputs), options, kill=kill, trace=not args.no_trace
    )
    estimate = None
    if result.ok and not workload.rekill:
        estimate = estimate_memory(
            workload.mod,
            workload.input_shapes,
            kill=kill,
            func=workload.func,
            return_slot=mode == "bytecode",
        )
    return {"result": result, "estimate": estimate}


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value / MiB:.3f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:.3f}"


def _table(rows: list[list[str]], left: int = 1) -> str:
    """Aligned columns: the first ``left`` columns (and the last, if ``left`` is 0)
    flush left, the others right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def cell(i: int, text: str) -> str:
        flush_left = i < left if left else i > 0
        return text.ljust(widths[i]) if flush_left else text.rjust(widths[i])

    return "\n".join("  ".join(cell(i, c) for i, c in enumerate(r)).rstrip() for r in rows)


def _summary_rows(cells: dict[str, dict], labels: list[str]) -> list[list[str]]:
    rows = [["", *labels]]

    def row(name: str, get: Any) -> None:
        rows.append([name, *(get(cells[k]) for k in labels)])

    def peak(c: dict) -> Any:
        return c["result"].peak_bytes

    def summ(c: dict, field: str) -> Any:
        s = c["result"].trace_summary
        return None if s is None else getattr(s, field)

    def bound(c: dict) -> Any:
        return None if c["estimate"] is None else c["estimate"].liveness_peak_bytes

    def waste(c: dict) -> str:
        s = c["result"].trace_summary or c["estimate"]
        return "-" if s is None else f"{sum(s.waste_by_function.values()) / MiB:.1f}"

    row("measured peak (MiB)", lambda c: _mib(peak(c)) if c["result"].ok else "failed")
    row("trace, allocator replay", lambda c: _mib(summ(c, "predicted_peak_bytes")))
    row("trace, live bytes", lambda c: _mib(summ(c, "live_peak_bytes")))
    row("liveness bound", lambda c: _mib(bound(c)))
    row("pooled model (static)", lambda c: _mib(c["estimate"] and c["estimate"].pooled_bytes))
    row("measured / bound", lambda c: _ratio(peak(c), bound(c)))
    row("replay / measured", lambda c: _ratio(summ(c, "predicted_peak_bytes"), peak(c)))
    row("waste (MiB x bindings)", waste)

    def attributed(c: dict) -> str:
        done = summ(c, "attributed")
        return "-" if done is None else f"{done}/{summ(c, 'program_events')}"

    row("attributed calls", attributed)
    return rows


def _holders(cell: dict, top: int) -> tuple[str, list[list[str]]]:
    summary, estimate = cell["result"].trace_summary, cell["estimate"]
    source, holders = ("trace", summary.at_peak) if summary else ("static", ())
    if not holders and estimate is not None:
        source, holders = "static", estimate.at_peak
    total = sum(h.bytes for h in holders)
    head = f"{len(holders)} buffers, {total / MiB:.3f} MiB ({source})"
    rows = [["MiB", "variable", "defined at", "last used at", "how it ends"]]
    for h in holders[:top]:
        last = str(h.last_used_at) if h.last_used_at else "-"
        rows.append([f"{h.bytes / MiB:.3f}", h.var, str(h.defined_at), last, h.reason])
    return head, rows


def _print_explanations(cells: dict[str, dict], labels: list[str], mode: str, cfg: str) -> None:
    """Which case each variant's peak is in (:func:`benchkill.explain_peak`'s parts, from
    its trace): planned storage, what kills can free, the pool's freed buffers."""
    from benchkill.execution.explain import PeakExplanation

    lines = []
    for lab in labels:
        r = cells[lab]["result"]
        parts = r.trace_summary.peak_parts if r.ok and r.trace_summary else None
        if parts is not None:
            explained = PeakExplanation(kill_arg(lab), mode, cfg, int(r.peak_bytes), parts)
            lines.append(f"  kill={lab}: {explained.text()}\n    {parts.advice()}")
    if lines:
        print(f"\nwhy the peak, {mode} (parts of the trace's replayed peak)\n" + "\n".join(lines))


def _waste_rows(cells: dict[str, dict], labels: list[str]) -> list[list[str]]:
    per: dict[str, dict[str, int]] = {}
    for k in labels:
        s = cells[k]["result"].trace_summary or cells[k]["estimate"]
        per[k] = {} if s is None else s.waste_by_function
    functions = sorted({f for table in per.values() for f in table})
    rows = [["function", *labels]]
    for f in functions:
        rows.append([f, *(f"{per[k].get(f, 0) / MiB:.1f}" for k in labels)])
    return rows


def run(args: argparse.Namespace) -> int:
    from benchkill.execution.outputs import compare_outputs

    workload = _subject(args)
    labels = list(dict.fromkeys(args.kill))
    kills = [kill_arg(name) for name in labels]
    failed: list[str] = []
    mismatched: list[str] = []
    where = f" ({workload.description})" if workload.description else ""
    print(f"{workload.name}{where}: function {workload.func}, {args.memory_cfg} allocator")
    for mode in dict.fromkeys(args.exec_mode):
        cells = {
            lab: _measure(workload, mode, k, args) for lab, k in zip(labels, kills, strict=True)
        }
        results = [c["result"] for c in cells.values()]
        if all(r.stage == "build" for r in results):  # the module, not a kill step
            raise BenchkillError(
                f"TVM's build rejects {workload.name} ({mode}): {one_line(results[0].error)}"
            )
        print(f"\n{mode}\n" + _table(_summary_rows(cells, labels)))
        for lab in labels:
            r = cells[lab]["result"]
            if not r.ok:
                failed.append(f"kill={lab} ({mode})")
                print(f"  kill={lab}: {r.stage} failed: {r.error}")
            elif workload.expected and (
                wrong := compare_outputs(r.outputs, workload.expected, reference=workload.reference)
            ):
                mismatched.append(f"kill={lab} ({mode})")
                print(f"  kill={lab}: MISMATCH: {wrong}")
            elif r.trace_error:
                failed.append(f"the trace of kill={lab} ({mode})")
                print(f"  kill={lab}: no trace: {r.trace_error}")
            elif r.trace_summary and r.trace_summary.attribution_error:
                print(f"  kill={lab}: attribution stopped: {r.trace_summary.attribution_error}")
        for lab in labels:
            if cells[lab]["result"].ok:
                head, rows = _holders(cells[lab], args.top)
                print(f"\nat the peak, kill={lab}, {mode}: {head}\n" + _table(rows, left=0))
        _print_explanations(cells, labels, mode, args.memory_cfg)
        waste = _waste_rows(cells, labels)
        print(f"\nwaste per function (MiB x bindings held after last use), {mode}")
        print(_table(waste) if len(waste) > 1 else "  none")
        for lab in labels:
            s = cells[lab]["result"].trace_summary or cells[lab]["estimate"]
            for w in () if s is None else s.waste[: args.top]:
                print(
                    f"  kill={lab}: {w.function}.{w.var} {w.bytes / MiB:.3f} MiB x "
                    f"{w.bindings} bindings: {w.reason}"
                )
    if workload.expected and not mismatched:
        print(f"\noutputs match {workload.reference} (tolerance: benchkill.execution.outputs)")
    if mismatched:
        print(f"\noutputs differ from {workload.reference}: {', '.join(mismatched)}")
        return 1
    if failed:
        raise MeasurementError(f"not measured: {', '.join(failed)} (the errors are above)")
    return 0
