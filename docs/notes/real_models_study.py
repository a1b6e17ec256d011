"""The study of docs/notes/real-models.md: peak memory of the registry's real models.

Usage: ``python docs/notes/real_models_study.py OUT.jsonl [--shapes S,..] [--modes M,..]
[--explain] [--quick] [MODEL ...]`` (run from the checkout; every figure of the note comes
from the lines it appends to OUT.jsonl, one per measurement; ``--table`` prints the
note's tables from them).  One model's row is also
``benchkill memory --torch ENTRY --dynamic x:0 --memory-cfg naive``.

The models at the registry's full sizes (``--quick``: its quick sizes). For each model x
shape mode x allocator x exec mode, the kill variants are measured in one child
(:func:`benchkill.execution.vm_measure.measure_vm_variants`: median of 3 peak runs), their
outputs checked against PyTorch's; a variant whose killed module is structurally equal to
an earlier one's (benchkill's and beyond's equal TVM's on these If-free models) is not
built again, its row says ``same_as``. Then, in bytecode mode, each allocator's peak of
the no-kill and the TVM-kill builds is explained from a traced run
(:func:`benchkill.execution.measured_peak.explain_peak`).
"""

from __future__ import annotations

import argparse
import json
import time

from benchkill.execution.measured_peak import explain_peak
from benchkill.execution.outputs import compare_outputs, max_difference
from benchkill.execution.pipeline import kill_pass
from benchkill.execution.vm_measure import VMOptions, measure_vm_variants
from benchkill.inputs.real_models import MODELS, SHAPES, clear_cache, kill_input, real_workload

KILLS = (None, "tvm", "benchkill", "beyond")


def main(
    out: str, models: list[str], shapes: list[str], modes: list[str], explain: bool, quick: bool
) -> None:
    with open(out, "a") as sink:

        def emit(**row):
            sink.write(json.dumps(row) + "\n")
            sink.flush()

        for name in models:
            for shape in shapes:
                w = real_workload(name, shape, quick=quick)
                same = _same_programs(name, shape, quick)
                distinct = [k for k in KILLS if same[k] == k]
                for cfg in ("pooled", "naive"):
                    for mode in modes:
                        t0 = time.perf_counter()
                        options = VMOptions(mode, cfg, repeat=0, peak_repeat=3, timeline=False)
                        measured = measure_vm_variants(w.mod, w.inputs, distinct, options)
                        by_kill = dict(zip(distinct, measured, strict=True))
                        for kill in KILLS:
                            r = by_kill[same[kill]]
                            check = max_diff = None
                            if r.ok:
                                check = compare_outputs(r.outputs, w.expected)
                                max_diff = max_difference(r.outputs, w.expected)
                            emit(kind="peak", model=name, shape=shape, memory_cfg=cfg, quick=quick,
                                 exec_mode=mode, kill=kill, ok=r.ok, error=r.error,
                                 peak_bytes=r.peak_bytes, peaks=list(r.peaks),
                                 build_seconds=r.build_seconds, output_check=check,
                                 max_difference=max_diff, workload=w.name,
                                 same_as=same[kill] if same[kill] != kill else None,
                                 seconds=time.perf_counter() - t0)  # fmt: skip
                for cfg in ("pooled", "naive") if explain else ():
                    for kill in (None, "tvm"):
                        e = explain_peak(w.mod, w.inputs, kill=kill, memory_cfg=cfg, peak_repeat=3)
                        emit(kind="explain", model=name, shape=shape, memory_cfg=cfg, quick=quick,
                             exec_mode="bytecode", kill=kill, text=e.text(),
                             parts=e.parts.as_dict(), measured=e.measured_peak_bytes)  # fmt: skip
            clear_cache()


def table(path: str) -> str:
    """The note's tables (markdown) from the lines of ``path``: the peaks, MiB, per model,
    shape, allocator and exec mode, and the explanations of the traced runs."""
    rows: dict = {}
    explained = []
    with open(path) as lines:
        for line in lines:
            r = json.loads(line)
            if r["kind"] == "peak":
                key = (r["model"], r["shape"], r["memory_cfg"], r["exec_mode"])
                rows.setdefault(key, {})[r["kill"]] = r
            else:
                explained.append(r)
    mib = float(1 << 20)
    out = [
        "| model | shape | allocator | exec mode | no kills | TVM | benchkill | beyond | saved |",
        "|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for key, by_kill in rows.items():
        cells = []
        for kill in KILLS:
            r = by_kill.get(kill)
            ok = r is not None and r["ok"] and r["output_check"] is None
            cells.append(f"{r['peak_bytes'] / mib:.2f}" if ok else "fails")
        none, tvm = by_kill.get(None), by_kill.get("tvm")
        saved = "-"
        if none and tvm and none["ok"] and tvm["ok"]:
            saved = f"{(none['peak_bytes'] - tvm['peak_bytes']) / none['peak_bytes']:.0%}"
        out.append(f"| {' | '.join(key)} | {' | '.join(cells)} | {saved} |")
    out += [
        "",
        "| model | shape | allocator | kills | measured | replayed | planned | symbolic | "
        "unplanned | pool's free | held after last use | case |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for e in explained:
        p = e["parts"]
        figures = [e["measured"], p["peak_bytes"], p["planned_bytes"], p["symbolic_bytes"]]
        figures += [p["unplanned_bytes"], p["pooled_free_bytes"], p["dead_bytes"]]
        kill = "none" if e["kill"] is None else e["kill"]
        cells = " | ".join(f"{f / mib:.2f}" for f in figures)
        out.append(
            f"| {e['model']} | {e['shape']} | {e['memory_cfg']} | {kill} | {cells} | {p['case']} |"
        )
    return "\n".join(out)


def _same_programs(name: str, shape: str, quick: bool) -> dict:
    """Each kill variant -> the first variant whose killed module equals its own."""
    import tvm_ffi

    lowered = kill_input(name, shape, quick=quick)
    killed: dict = {}
    same: dict = {}
    for kill in KILLS:
        step = kill_pass(kill)
        module = lowered if step is None else step(lowered)
        same[kill] = next(
            (
                k
                for k, m in killed.items()
                if tvm_ffi.structural_equal(m, module, map_free_vars=True)
            ),
            kill,
        )
        killed[kill] = module
    return same


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("models", nargs="*", default=list(MODELS))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--modes", default="bytecode,compiled")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--table", action="store_true", help="print the tables of OUT.jsonl")
    a = parser.parse_intermixed_args()
    if a.table:
        print(table(a.out))
        raise SystemExit(0)
    models, shapes, modes = a.models or list(MODELS), a.shapes.split(","), a.modes.split(",")
    main(a.out, models, shapes, modes, a.explain, a.quick)
