"""The VM workloads: Relax programs whose memory depends on kills, with their inputs.

Every builder is deterministic (fixed seeds) and returns a :class:`Workload`: the
high-level module, the inputs of its entry function, the shapes that give its symbolic
dimensions values, and whether it is the upstream re-kill scenario.

- :func:`layer_chain`: ``main`` calls a Relax subfunction (a "layer") ``layers`` times
  in a chain.  Each call returns a fresh tensor allocated inside the layer, which
  only a kill in ``main`` can release: without kills every result stays alive until
  ``main`` returns.  With ``symbolic=True`` the length is a symbolic dimension ``n``.
- :func:`if_chain`: an ``If`` on a boolean input first, then the chain.  TVM's pass
  emits no kill in ``main`` after the ``If``; ``kill="beyond"`` does.
- :func:`mlp`: a real model written with ``tvm.relax.frontend.nn``: residual MLP blocks
  (LayerNorm, Linear, GELU, Linear) with a symbolic sequence length and random weights.
- :func:`gpt2`: a GPT-2-style decoder (:func:`benchkill.inputs.networks.gpt2`): 12 layers,
  hidden 768, 12 heads in full, symbolic sequence length, batch 1, random weights, and a
  4096-word vocabulary instead of GPT-2's 50257 (the tied LM head materializes the
  transposed embedding on every run: 147 MiB at 50257 words, which would dominate the
  peak and make a run minutes long; see :mod:`benchkill.inputs.networks`).
- :func:`convnet`: a residual conv net with a symbolic batch
  (:func:`benchkill.inputs.networks.convnet`): activations shrink stage by stage, the
  opposite memory shape of a transformer.
- :func:`upstream_rekill`: the module of apache/tvm#20200, to be compiled by TVM's
  default pipeline and killed again (``measure_vm(..., rekill=True)``).
- :data:`REAL_MODELS`: torchvision CNNs and transformers from PyTorch with random weights
  (:mod:`benchkill.inputs.real_models`, :func:`real_model`), each static, dynamic with an
  upper bound or dynamic without one; they need torch and torchvision.

:data:`WORKLOADS` names them, with the parameters of a full run and of a quick one; the
"vm" suite and the asv suite both pick their workloads there (:func:`make_workload`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from benchkill.errors import BenchkillError, check_int
from benchkill.inputs.workload_spec import Workload

MiB = 1 << 20


def _length(mib: Any) -> int:
    """float32 elements in ``mib`` MiB (``mib`` may be a fraction, e.g. 0.25)."""
    if isinstance(mib, bool) or not isinstance(mib, (int, float)) or not mib > 0:
        raise BenchkillError(f"tensor size must be a positive number of MiB, not {mib!r}")
    length = int(mib * MiB) // 4
    if length < 1:
        raise BenchkillError(f"tensor size {mib!r} MiB holds no float32 element")
    return length


def _dim(length: int, symbolic: bool) -> Any:
    """A vector length: ``length``, or a new symbolic ``n`` (one per function: a
    symbolic variable belongs to the function whose signature defines it)."""
    import tvm

    return tvm.tirx.Var("n", "int64") if symbolic else length


def _add_layer(bb: Any, name: str, dim: Any, scale: float) -> Any:
    """``name(x) = x * scale + 1``: two kernels, one intermediate, a fresh result."""
    from tvm import relax

    x = relax.Var("x", relax.TensorType((dim,), "float32"))
    with bb.function(name, [x]):
        y = bb.emit(relax.op.multiply(x, relax.const(scale, "float32")))
        z = bb.emit(relax.op.add(y, relax.const(1.0, "float32")))
        bb.emit_func_output(z)
    return bb.get().get_global_var(name)


def _chain(bb: Any, layer: Any, start: Any, layers: int) -> Any:
    from tvm import relax

    value = start
    for _ in range(layers):
        value = bb.emit(relax.Call(layer, [value]))
    return value


def _input_vector(length: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(length).astype("float32")


def layer_chain(layers: int = 24, mib: float = 16, *, symbolic: bool = False) -> Workload:
    """``main(x)`` = ``layers`` chained calls of ``layer``, float32 vectors of ``mib`` MiB."""
    from tvm import relax

    layers = check_int(layers, "layers")
    length = _length(mib)
    bb = relax.BlockBuilder()
    layer = _add_layer(bb, "layer", _dim(length, symbolic), 0.5)
    x = relax.Var("x", relax.TensorType((_dim(length, symbolic),), "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(_chain(bb, layer, x, layers))
    kind = "symbolic" if symbolic else "static"
    return Workload(
        name=f"{'symbolic_chain' if symbolic else 'chain'}-{layers}x{mib:g}MiB",
        mod=bb.get(),
        inputs=(_input_vector(length),),
        input_shapes={"x": (length,)},
        description=f"{layers} chained layer calls, {mib:g} MiB {kind} float32 tensors",
    )


def if_chain(layers: int = 20, mib: float = 16, *, cond: bool = True) -> Workload:
    """``main(x, cond)``: ``If cond`` picks one of two layers, then ``layers`` chained calls."""
    import tvm
    from tvm import relax

    layers = check_int(layers, "layers")
    length = _length(mib)
    bb = relax.BlockBuilder()
    layer = _add_layer(bb, "layer", length, 0.5)
    other = _add_layer(bb, "other", length, 0.25)
    x = relax.Var("x", relax.TensorType((length,), "float32"))
    c = relax.Var("cond", tvm.ir.PrimType("bool"))
    with bb.function("main", [x, c]):
        picked = bb.emit(relax.If(c, relax.Call(layer, [x]), relax.Call(other, [x])))
        bb.emit_func_output(_chain(bb, layer, picked, layers))
    return Workload(
        name=f"if_chain-{layers}x{mib:g}MiB",
        mod=bb.get(),
        inputs=(_input_vector(length), bool(cond)),
        input_shapes={"x": (length,)},
        description=f"If, then {layers} chained layer calls, {mib:g} MiB float32 tensors",
    )


def mlp(seq: int = 2048, dim: int = 64, hidden: int = 256, blocks: int = 2) -> Workload:
    """A residual MLP written with ``relax.frontend.nn``, symbolic sequence length."""
    from tvm.relax.frontend import nn

    seq, dim = check_int(seq, "seq"), check_int(dim, "dim")
    hidden, blocks = check_int(hidden, "hidden"), check_int(blocks, "blocks")

    class Block(nn.Module):
        def __init__(self) -> None:
            self.norm = nn.LayerNorm(dim)
            self.fc1 = nn.Linear(dim, hidden)
            self.fc2 = nn.Linear(hidden, dim)

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            return x + self.fc2(nn.op.gelu(self.fc1(self.norm(x))))

    class MLP(nn.Module):
        def __init__(self) -> None:
            self.blocks = nn.ModuleList([Block() for _ in range(blocks)])

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            for block in self.blocks:
                x = block(x)
            return x

    spec = {"forward": {"x": nn.spec.Tensor(["seq", dim], "float32")}}
    mod, params = MLP().export_tvm(spec=spec)
    rng = np.random.default_rng(0)
    weights = []
    for name, param in params:
        shape = tuple(int(s) for s in param.shape)
        if name.endswith("norm.weight"):
            weights.append(np.ones(shape, "float32"))
        else:
            weights.append((rng.standard_normal(shape) / np.sqrt(shape[-1])).astype("float32"))
    x = rng.standard_normal((seq, dim)).astype("float32")
    return Workload(
        name=f"mlp-{blocks}x{dim}x{hidden}-seq{seq}",
        mod=mod,
        inputs=(x, *weights),
        func="forward",
        input_shapes={"x": (seq, dim)},
        description=f"nn.Module residual MLP, {blocks} blocks, d={dim}, h={hidden}, seq={seq}",
    )


def gpt2(
    layers: int = 12, hidden: int = 768, heads: int = 12, vocab: int = 4096, seq: int = 16
) -> Workload:
    """A GPT-2-style decoder on a sequence of ``seq`` tokens (entry ``forward``)."""
    from benchkill.inputs import networks

    mod, inputs, weights = networks.gpt2(layers, hidden, heads, vocab, seq)
    return Workload(
        name=f"gpt2-{layers}x{hidden}-v{vocab}-seq{seq}",
        mod=mod,
        inputs=(*inputs, *weights),
        func="forward",
        input_shapes={"input_ids": (1, seq), "position_ids": (1, seq)},
        description=(
            f"GPT-2-style decoder, {layers} layers, hidden {hidden}, {heads} heads, "
            f"vocabulary {vocab}, seq={seq}"
        ),
    )


def convnet(batch: int = 4, size: int = 128, channels: int = 16, stages: int = 3) -> Workload:
    """A residual conv net on ``batch`` images of ``size`` x ``size`` (entry ``forward``)."""
    from benchkill.inputs import networks

    mod, inputs, weights = networks.convnet(batch, size, channels, stages)
    return Workload(
        name=f"convnet-{stages}x{channels}-{size}px-batch{batch}",
        mod=mod,
        inputs=(*inputs, *weights),
        func="forward",
        input_shapes={"x": (batch, 3, size, size)},
        description=(
            f"residual conv net, {stages} stages from {channels} channels, "
            f"{size}x{size} images, batch {batch}"
        ),
    )


def upstream_rekill() -> Workload:
    """The module of the upstream test: TVM's default pipeline output, killed again."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 4), "float32"))
    with bb.function("main", [x], attrs={"num_input": 1}):
        y = bb.emit(relax.op.add(x, relax.const(1.0, "float32")))
        z = bb.emit(relax.op.add(y, relax.const(2.0, "float32")))
        bb.emit_func_output(z)
    return Workload(
        name="upstream_rekill",
        mod=bb.get(),
        inputs=(np.arange(4, dtype="float32").reshape(1, 4),),
        input_shapes={"x": (1, 4)},
        rekill=True,
        description="apache/tvm#20200: default pipeline output re-killed (null_value kill)",
    )


# --- the registry ---------------------------------------------------------------------


@dataclass(frozen=True)
class WorkloadFactory:
    """A named workload: its builder and the builder's parameters in a full and a quick
    run; ``needs`` the optional packages it imports (the real models need torch)."""

    build: Callable[..., Workload]
    params: Mapping[str, Any]
    quick: Mapping[str, Any]
    needs: tuple[str, ...] = ()

    def parameters(self, quick: bool = False) -> dict[str, Any]:
        """The builder's keyword arguments of a full run, or of a quick one."""
        return dict(self.quick if quick else self.params)

    def available(self) -> bool:
        """Whether the packages it needs are installed."""
        import importlib.util

        return all(importlib.util.find_spec(name) is not None for name in self.needs)


#: The real models (:mod:`benchkill.inputs.real_models`: PyTorch, random weights), in the
#: registry under their names, dynamic with no bound unless ``shape`` says otherwise.
REAL_MODELS = ("resnet18", "squeezenet1_0", "mobilenet_v3_small", "encoder", "decoder")


def real_model(name: str, shape: str = "unbounded", sizes: str = "quick") -> Workload:
    """The real model ``name`` in the shape mode ``shape`` ("static", "bounded",
    "unbounded") at the ``sizes`` of a "quick" or a "full" run (cached per process)."""
    from benchkill.inputs.real_models import real_workload

    if sizes not in ("quick", "full"):
        raise BenchkillError(f"sizes must be 'quick' or 'full', not {sizes!r}")
    return real_workload(name, shape, sizes == "quick")


#: workload name -> its factory, in the order the suites list them
WORKLOADS: dict[str, WorkloadFactory] = {
    "chain": WorkloadFactory(layer_chain, {"layers": 24, "mib": 16}, {"layers": 8, "mib": 4}),
    "symbolic_chain": WorkloadFactory(
        partial(layer_chain, symbolic=True), {"layers": 24, "mib": 16}, {"layers": 8, "mib": 4}
    ),
    "if_chain": WorkloadFactory(if_chain, {"layers": 20, "mib": 16}, {"layers": 8, "mib": 4}),
    "mlp": WorkloadFactory(
        mlp,
        {"seq": 2048, "dim": 64, "hidden": 256, "blocks": 2},
        {"seq": 2048, "dim": 32, "hidden": 256, "blocks": 1},
    ),
    "gpt2": WorkloadFactory(
        gpt2,
        {"layers": 12, "hidden": 768, "heads": 12, "vocab": 4096, "seq": 16},
        {"layers": 2, "hidden": 128, "heads": 4, "vocab": 4096, "seq": 16},
    ),
    "convnet": WorkloadFactory(
        convnet,
        {"batch": 4, "size": 128, "channels": 16, "stages": 3},
        {"batch": 2, "size": 64, "channels": 8, "stages": 2},
    ),
    "upstream_rekill": WorkloadFactory(upstream_rekill, {}, {}),
    **{
        name: WorkloadFactory(
            partial(real_model, name),
            {"shape": "unbounded", "sizes": "full"},
            {"shape": "unbounded", "sizes": "quick"},
            needs=("torch", "torchvision"),
        )
        for name in REAL_MODELS
    },
}


def make_workload(
    name: Any, params: Mapping[str, Any] | None = None, *, quick: bool = False
) -> Workload:
    """The workload ``name`` built with the values ``params`` gives its builder's parameters,
    the full run's (or with ``quick``, the quick run's) for the others.  Other keys of
    ``params`` (a case's ``exec_mode``, ...) are ignored."""
    factory = WORKLOADS.get(name) if isinstance(name, str) else None
    if factory is None:
        raise BenchkillError(
            f"unknown vm workload {name!r}; expected one of {', '.join(WORKLOADS)}"
        )
    kwargs = factory.parameters(quick)
    given = params or {}
    kwargs.update({key: given[key] for key in kwargs if key in given})
    return factory.build(**kwargs)
