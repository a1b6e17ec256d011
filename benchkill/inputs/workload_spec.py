"""What every workload is: a module, its inputs, and what the measurement checks them with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, eq=False)
class Workload:
    """A module to measure, the inputs of ``func`` and what the static estimate needs.

    ``expected`` are the outputs the run must give (flattened depth-first), computed by
    the framework the model came from, ``reference`` names it ("PyTorch eager",
    "onnxruntime"); empty for the modules benchkill writes, whose kill variants are
    compared with each other."""

    name: str
    mod: Any
    inputs: tuple[Any, ...]
    func: str = "main"
    input_shapes: Mapping[str, Sequence[int]] = field(default_factory=dict)
    rekill: bool = False
    description: str = ""
    expected: tuple[Any, ...] = ()
    reference: str = ""
