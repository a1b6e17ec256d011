"""Instruction counts of benchkill's pass, TVM's pass and the floor on the real family.

Run from a checkout (the note docs/notes/pass-floor-real-ir.md gives the figures)::

    PYTHONPATH=$PWD python docs/notes/real_ir_counts.py OUT_DIR [CASE ...]

It runs itself under ``valgrind --tool=callgrind --instr-atstart=no`` in the pinned
environment of :mod:`benchkill.bench.instructions` (``child_env``), one process for every
case: each case's kill input is built once, uncounted, then benchkill's pass, TVM's pass and
the floor are each applied in a warm-up window and two counted windows
(:func:`benchkill.bench.instructions_child.windows`); it then prints, per case, the median
counts and benchkill / TVM, benchkill / floor and floor / TVM.  Building the models under
valgrind is most of the time (resnet18 static: 107 s there, 1.7 s natively).
"""

from __future__ import annotations

import glob
import statistics
import subprocess
import sys
from pathlib import Path

IMPLS = ("benchkill", "tvm", "floor")
DEFAULT_CASES = ("resnet18-static", "encoder-unbounded", "decoder-unbounded", "resnet18-unbounded")
REPEATS = 2


def child(hooks: str, cases: list[str]) -> None:
    from benchkill.bench.instructions_child import Callgrind, FloorOf, make_pass, windows
    from benchkill.inputs.real_pass import real_pass_input, release

    cg = Callgrind(hooks)
    passes = {impl: make_pass(impl) for impl in IMPLS}
    for case in cases:
        mod = real_pass_input(case)
        for impl, pass_ in passes.items():
            if isinstance(pass_, FloorOf):
                pass_.prepare(mod)
            windows(pass_, mod, REPEATS, cg, f"{case}/{impl}")
        passes["floor"].work = None
        del mod
        release()
        print("done", case, flush=True)


def counts(out: Path) -> dict[str, dict[str, float]]:
    """case -> impl -> median count of the counted windows, from the dumps in ``out``."""
    from benchkill.bench.instructions import LABEL_PREFIX, parse_dump

    found: dict[str, dict[str, list[int]]] = {}
    for path in glob.glob(str(out / "callgrind.out.*.*")):
        label, total = parse_dump(path)
        if not label or ":repeat-" not in label:
            continue
        case, impl = label[len(LABEL_PREFIX) :].rsplit(":", 1)[0].split("/")
        found.setdefault(case, {}).setdefault(impl, []).append(total)
    return {c: {i: statistics.median(v) for i, v in by.items()} for c, by in found.items()}


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        child(argv[1], argv[2:])
        return 0
    from benchkill.bench.instructions import CALLGRIND_OPTIONS, child_env, find_instrument

    out = Path(argv[0]).resolve()
    cases = argv[1:] or list(DEFAULT_CASES)
    out.mkdir(parents=True, exist_ok=False)
    instrument = find_instrument()
    code = Path(__file__).resolve().parents[2]
    cmd = [
        instrument.valgrind,
        *CALLGRIND_OPTIONS,
        f"--callgrind-out-file={out}/callgrind.out.%p",
        f"--log-file={out}/valgrind.log",
        sys.executable,
        "-P",
        str(Path(__file__).resolve()),
        "--child",
        instrument.hooks,
        *cases,
    ]
    subprocess.run(cmd, cwd=out, env=child_env(code), check=True)
    for case, by in counts(out).items():
        b, t, f = (by[i] for i in IMPLS)
        print(
            f"{case}: benchkill {b:,.0f}, tvm {t:,.0f}, floor {f:,.0f} instructions; "
            f"benchkill / tvm {b / t:.3f}, benchkill / floor {b / f:.3f}, floor / tvm {f / t:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
