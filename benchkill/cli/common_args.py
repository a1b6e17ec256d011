"""The command line's shared options: one option per concept, defined once.

As asv's ``asv/commands/common_args.py``: every command adds the options of a concept it
shares with others through the ``add_*`` functions here, so a kill variant is ``--kill``,
the entry function ``--func``, a count of repeated measurements ``--repeats``, a seed
``--seed``, an output ``--out`` and the quick sizes ``--quick`` wherever they appear.
Where a module comes from is one scheme (:func:`module_source`): a positional ``FILE``
(TVMScript), or exactly one source option in the same mutually exclusive group
(``--generate FAMILY N``, ``--workload NAME``, and a model's front doors ``--model``,
``--torch``, ``--onnx`` with ``--dynamic``: :func:`add_models`). An old spelling stays one
release as a hidden alias (:mod:`benchkill.cli.deprecation`) that prints one ``warning:``
line on stderr saying what to use instead, and still works. Choices come from
:mod:`benchkill.vocabulary`, values are checked by the ``type=`` functions of
:mod:`benchkill.cli.args`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchkill import vocabulary
from benchkill.cli import args as types
from benchkill.cli.deprecation import alias
from benchkill.errors import BenchkillError

# --- where a module comes from -------------------------------------------------------

#: The source options a module can come from besides a positional ``file``, by dest (see
#: :func:`source_of`); a new source (a model, a PyTorch or ONNX file) is added here and
#: by a function ``add_<source>`` below, in the group :func:`module_source` makes.
SOURCES = ("generate", "workload", "model", "torch", "onnx")


def module_source(p: argparse.ArgumentParser, file_help: str, old: str | None = None) -> Any:
    """The required mutually exclusive group of where the command's module comes from:
    a positional ``file`` (a TVMScript file, ``file_help`` says which form; ``old``: the
    option that named it before, a deprecated alias), to which the caller adds its
    source options (:func:`add_generate`, :func:`add_workload`)."""
    group = p.add_mutually_exclusive_group(required=True)
    # None until given; SUPPRESS: an absent FILE does not undo an old option that named it
    p.set_defaults(file=None)
    file = group.add_argument(
        "file", nargs="?", default=argparse.SUPPRESS, metavar="FILE", help=file_help
    )
    if old is not None:
        alias(group, file, old, use="FILE")
    return group


def source_of(args: argparse.Namespace) -> str:
    """Which source the command line gave: ``"file"`` or one of :data:`SOURCES`."""
    given = [name for name in SOURCES if getattr(args, name, None)]
    return given[0] if given else "file"


class _Generate(argparse.Action):
    """``--generate FAMILY N [N ...]``: each N checked as a positive whole number."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        family, *sizes = values
        if not sizes:
            raise argparse.ArgumentError(self, "expected FAMILY and at least one N")
        try:
            numbers = tuple(types.positive_int(n) for n in sizes)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentError(self, f"N {exc}") from None
        setattr(namespace, self.dest, (family, numbers))


def add_generate(group: Any, several: bool = False) -> argparse.Action:
    """``--generate FAMILY N`` (``several``: ``FAMILY N [N ...]``, one module per size):
    ``args.generate`` is ``(family, (n, ...))``.  Give :func:`add_seed` too."""
    return group.add_argument(
        "--generate",
        nargs="+" if several else 2,
        metavar=("FAMILY", "N"),
        action=_Generate,
        help="the module benchkill.generate(FAMILY, N) instead of a file: FAMILY one of "
        + ", ".join(vocabulary.FAMILIES)
        + ("; several N: one module each" if several else "")
        + " (default: read FILE)",
    )


def add_workload(group: Any, names: Sequence[str]) -> argparse.Action:
    """``--workload NAME``: a registered VM workload (``names``) with its inputs."""
    return group.add_argument(
        "--workload",
        choices=list(names),
        metavar="NAME",
        help=f"a registered VM workload with its inputs: {', '.join(names)} (default: read FILE)",
    )


def add_models(p: argparse.ArgumentParser, group: Any, instead: str = "FILE") -> None:
    """A model's front doors in the source ``group`` (:mod:`benchkill.inputs.sources`,
    the spelling of :func:`benchkill.load_model`): ``--model ENTRY`` (the user's Python
    returns an IRModule and inputs), ``--torch ENTRY`` (a ``torch.nn.Module`` and example
    inputs, ``torch.export``), ``--onnx FILE``; and ``--dynamic DIM [DIM ...]`` on ``p``.
    :func:`model_of` loads the one given; ``instead`` names what is read without one."""
    default = f" (default: read {instead})"
    group.add_argument(
        "--model",
        metavar="ENTRY",
        help="package.module:function returning a high-level Relax IRModule and its inputs "
        "(or a mapping with 'mod', 'inputs' and optionally 'params', 'expected')" + default,
    )
    group.add_argument(
        "--torch",
        metavar="ENTRY",
        help="package.module:function returning a torch.nn.Module and example inputs "
        "(exported with torch.export, imported with TVM's frontend; needs the models extra)"
        + default,
    )
    group.add_argument(
        "--onnx",
        metavar="FILE",
        help="an ONNX model file (imported with TVM's frontend; needs the models extra)" + default,
    )
    p.add_argument(
        "--dynamic",
        nargs="+",
        action="extend",
        default=[],
        metavar="DIM",
        help="--torch/--onnx: dynamic dimensions by input name and axis, with an optional "
        "upper bound: x:0, x:0<=16, x:0=batch<=16; without it, shapes are static (default: none)",
    )


def model_of(args: argparse.Namespace) -> Any:
    """The :class:`~benchkill.inputs.workload_spec.Workload` of the front door the command
    line gave (:func:`add_models`), or None if it gave none."""
    from benchkill.inputs.sources import MODEL_SOURCES, load_model

    kind = source_of(args)
    if kind not in MODEL_SOURCES:
        if getattr(args, "dynamic", None):
            raise BenchkillError("--dynamic applies to --torch and --onnx")
        return None
    return load_model(**{kind: getattr(args, kind)}, dynamic=args.dynamic or None)


def add_func(p: argparse.ArgumentParser, what: str) -> argparse.Action:
    """``--func NAME``: the Relax function of the module (``args.function``; None: main;
    ``args.func`` is the command's own ``run``)."""
    return p.add_argument(
        "--func",
        dest="function",
        metavar="NAME",
        help=f"the Relax function of FILE {what} (default: main)",
    )


# --- what is measured, and how often -------------------------------------------------


def add_kill(
    p: argparse.ArgumentParser,
    several: bool = False,
    choices: Sequence[str] = vocabulary.KILL_PASSES,
    default: Any = "benchkill",
) -> argparse.Action:
    """``--kill VARIANT`` (``several``: ``VARIANT [VARIANT ...]``), names of
    :data:`benchkill.vocabulary.KILL_VARIANTS`; :func:`kill_epilog` says what each is."""
    return p.add_argument(
        "--kill",
        nargs="+" if several else None,
        choices=list(choices),
        default=list(default) if several else default,
        metavar="VARIANT",
        help=("kill variants to compare: " if several else "the kill variant: ")
        + ", ".join(choices),
    )


def kill_epilog(names: Sequence[str] = vocabulary.KILLS) -> str:
    """The epilog lines that say what each kill variant of ``names`` runs."""
    width = max(map(len, names))
    lines = [f"  {n:{width}}  {vocabulary.KILL_VARIANTS[n]}" for n in names]
    return "kill variants:\n" + "\n".join(lines)


def add_exec_modes(p: argparse.ArgumentParser) -> argparse.Action:
    """``--exec-mode MODE [MODE ...]``: the VM's exec modes."""
    return p.add_argument(
        "--exec-mode",
        nargs="+",
        choices=list(vocabulary.EXEC_MODES),
        default=[vocabulary.EXEC_MODES[0]],
        metavar="MODE",
        help=f"VM exec modes: {', '.join(vocabulary.EXEC_MODES)}",
    )


def add_memory_cfg(p: argparse.ArgumentParser) -> argparse.Action:
    """``--memory-cfg CFG``: the VM's allocator."""
    return p.add_argument(
        "--memory-cfg",
        choices=list(vocabulary.MEMORY_CFGS),
        default=vocabulary.MEMORY_CFGS[0],
        metavar="CFG",
        help=f"the VM's allocator: {', '.join(vocabulary.MEMORY_CFGS)} (naive frees at once)",
    )


def add_repeats(
    p: argparse.ArgumentParser, default: int, what: str, minimum: int = 1
) -> argparse.Action:
    """``--repeats N``: how many times a measurement (or a check) is repeated."""
    return p.add_argument(
        "--repeats", type=types.int_at_least(minimum), default=default, metavar="N", help=what
    )


def add_seed(p: argparse.ArgumentParser, what: str = "random seed") -> argparse.Action:
    """``--seed S``: a whole number >= 0."""
    return p.add_argument("--seed", type=types.non_negative_int, default=0, metavar="S", help=what)


def add_quick(p: argparse.ArgumentParser, what: str) -> argparse.Action:
    """``--quick``: the small sizes (``args.quick``: None when not given); full sizes are
    every command's default."""
    return p.add_argument(
        "--quick", action="store_true", default=None, help=f"{what} (default: full sizes)"
    )


# --- inputs and outputs --------------------------------------------------------------


def add_results(p: argparse.ArgumentParser) -> argparse.Action:
    """Positional ``results``: one or more results files of any kind benchkill reads."""
    return p.add_argument(
        "results",
        type=Path,
        nargs="+",
        metavar="RESULTS",
        help="results files: benchkill's, asv's (.asv/results/<machine>/*.json) or "
        "pytest-benchmark's (.benchmarks/<machine>/*.json, saved with --benchmark-save-data)",
    )


def add_out(
    p: argparse.ArgumentParser, metavar: str, what: str, default: Any = None
) -> argparse.Action:
    """``--out FILE`` or ``--out DIR``: where the command writes (never over a file that
    exists)."""
    return p.add_argument("--out", type=types.out_path, default=default, metavar=metavar, help=what)


# --- compare's thresholds ------------------------------------------------------------


def add_factor(p: argparse.ArgumentParser, default_text: str) -> argparse.Action:
    """``--factor F``: the ratio that counts as a change (default: per metric kind)."""
    return p.add_argument(
        "--factor",
        type=types.factor,
        metavar="F",
        help=f"ratio that counts as a change (default per metric kind: {default_text})",
    )


def add_alpha(p: argparse.ArgumentParser, default: float) -> argparse.Action:
    """``--alpha A``: the significance level of compare's Mann-Whitney U test."""
    return p.add_argument(
        "--alpha",
        type=types.alpha,
        default=default,
        metavar="A",
        help="significance level of compare's Mann-Whitney U test",
    )


# --- the project's policy (thresholds per case, acknowledged regressions) ----------


def add_policy(p: argparse.ArgumentParser) -> argparse.Action:
    """``--policy FILE``: the pyproject.toml whose ``[tool.benchkill]`` is the policy."""
    return p.add_argument(
        "--policy",
        type=Path,
        metavar="FILE",
        help="pyproject.toml with [tool.benchkill] thresholds per case and acknowledged "
        "regressions (default: the nearest pyproject.toml from the working directory; "
        "docs: guide/alerts)",
    )


def policy_of(args: argparse.Namespace) -> Any:
    """The :class:`~benchkill.reporting.policy.Policy` that ``--policy`` names."""
    from benchkill.reporting.policy import find_policy, load_policy

    return find_policy() if args.policy is None else load_policy(args.policy)


def add_shard(p: argparse.ArgumentParser, unit: str) -> argparse.Action:
    """``--shard K/N``: job K of N of a CI matrix does every N-th ``unit``, from the K-th."""
    from benchkill.bench.sharding import shard

    return p.add_argument(
        "--shard",
        type=shard,
        metavar="K/N",
        help=f"job K of N in a CI matrix: only every N-th {unit}, from the K-th (default: all)",
    )
