"""Real models from PyTorch with random weights (nothing downloaded), in three shape modes.

Each model is built in PyTorch with fixed seeds and imported through
:func:`benchkill.inputs.torch_import.export_torch` (``torch.export``, then TVM's
``from_exported_program``; weights as tensor constants), so its expected outputs are
PyTorch's own.  :data:`MODELS` lists them:

- ``resnet18``, ``squeezenet1_0``, ``mobilenet_v3_small``: torchvision CNNs
  (``weights=None``) on ``batch`` images of ``size`` x ``size``; the batch is the dynamic
  dimension (``x:0``).
- ``encoder``: ``torch.nn.TransformerEncoder`` (2 layers, d=128, 4 heads, feed-forward
  512, ``batch_first``) on ``batch`` sequences of ``seq`` vectors; the sequence is dynamic
  (``src:1``).
- ``decoder``: a GPT-style decoder written here in PyTorch (token and position
  embeddings, 2 pre-norm blocks of causal ``scaled_dot_product_attention`` and a GELU
  MLP, d=128, 4 heads, vocabulary 1000) on ``seq`` token ids; the sequence is dynamic
  (``ids:1``).

Which transformers TVM 0.27 builds on LLVM, measured with this TVM and torch 2.14 (static
and dynamic): ``torch.nn.TransformerEncoder`` and a decoder whose causal mask is
``scaled_dot_product_attention(..., is_causal=True)`` import, build and match PyTorch.  A
decoder that builds its mask as ``torch.full((s, s), -inf).triu(1)`` fails in the PyTorch
frontend, static too (its converter of ``triu`` reads the size as a list: "argument of type
'PrimType' is not iterable"); Hugging Face GPT-2 builds its mask that way and fails too
(docs/notes/real-models.md).

Shape modes (:data:`SHAPES`): ``"static"`` (exported with no dynamic dimension),
``"bounded"`` (dynamic with the upper bound ``bound``: ``tir_var_upper_bound``, so
``StaticPlanBlockMemory`` plans its storage for the bound) and ``"unbounded"`` (dynamic,
no bound: storage sized by the symbolic dimension).  :func:`real_workload` gives a model's
workload (high-level module, inputs, PyTorch's outputs) and :func:`kill_input` the module
lowered by TVM's default pipeline up to just before KillAfterLastUse; both are cached per
process (:func:`clear_cache` frees them).  The registry of all workloads is
:data:`benchkill.inputs.workloads.WORKLOADS`, which lists these too.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from benchkill.errors import BenchkillError
from benchkill.inputs.entry_points import require
from benchkill.inputs.workload_spec import Workload

SHAPES = ("static", "bounded", "unbounded")

#: model -> (kind, quick sizes, full sizes); ``bound`` is the bounded mode's upper bound.
_CNN = ({"batch": 2, "size": 64, "bound": 4}, {"batch": 8, "size": 128, "bound": 16})
_SEQ = ({"batch": 2, "seq": 32, "bound": 64}, {"batch": 4, "seq": 128, "bound": 256})
MODELS: dict[str, tuple[str, dict[str, int], dict[str, int]]] = {
    "resnet18": ("cnn", *_CNN),
    "squeezenet1_0": ("cnn", *_CNN),
    "mobilenet_v3_small": ("cnn", *_CNN),
    "encoder": ("encoder", *_SEQ),
    "decoder": ("decoder", {**_SEQ[0], "batch": 1}, {**_SEQ[1], "batch": 1}),
}

D_MODEL, HEADS, FF, LAYERS, VOCAB = 128, 4, 512, 2, 1000


def sizes(name: str, quick: bool = True) -> dict[str, int]:
    """The sizes of the model ``name`` in a quick run, or in a full one."""
    _check(name)
    return dict(MODELS[name][1 if quick else 2])


def _check(name: Any, shape: Any = "static") -> None:
    if name not in MODELS:
        raise BenchkillError(f"unknown real model {name!r}; expected one of {', '.join(MODELS)}")
    if shape not in SHAPES:
        raise BenchkillError(f"unknown shape mode {shape!r}; expected one of {', '.join(SHAPES)}")


def _decoder(torch: Any) -> Any:
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
            self.qkv, self.out = nn.Linear(D_MODEL, 3 * D_MODEL), nn.Linear(D_MODEL, D_MODEL)
            self.fc1, self.fc2 = nn.Linear(D_MODEL, 4 * D_MODEL), nn.Linear(4 * D_MODEL, D_MODEL)

        def forward(self, x: Any) -> Any:
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(D_MODEL, dim=-1)
            q, k, v = (t.view(b, s, HEADS, -1).transpose(1, 2) for t in (q, k, v))
            o = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out(o.transpose(1, 2).reshape(b, s, D_MODEL))
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))

    class Decoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tokens, self.positions = nn.Embedding(VOCAB, D_MODEL), nn.Embedding(512, D_MODEL)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln, self.head = nn.LayerNorm(D_MODEL), nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, ids: Any) -> Any:
            positions = torch.arange(ids.shape[1]).unsqueeze(0)
            x = self.tokens(ids) + self.positions(positions)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    return Decoder()


def build_model(name: str, quick: bool = True) -> tuple[Any, tuple[Any, ...], str]:
    """The PyTorch module of ``name`` (random weights, seed 0), its example inputs and
    the dynamic dimension's spelling without a bound (``x:0``)."""
    _check(name)
    torch = require("torch", "the real models")
    kind, size = MODELS[name][0], sizes(name, quick)
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    if kind == "cnn":
        torchvision = require("torchvision", "the torchvision models")
        module = getattr(torchvision.models, name)(weights=None)
        x = torch.randn(size["batch"], 3, size["size"], size["size"], generator=generator)
        return module, (x,), "x:0"
    if kind == "encoder":
        layer = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.0, batch_first=True)
        module = torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        x = torch.randn(size["batch"], size["seq"], D_MODEL, generator=generator)
        return module, (x,), "src:1"
    module = _decoder(torch)
    ids = torch.randint(0, VOCAB, (size["batch"], size["seq"]), generator=generator)
    return module, (ids,), "ids:1"


def real_workload(name: str, shape: str = "unbounded", quick: bool = True) -> Workload:
    """The workload of the real model ``name`` in the shape mode ``shape``: the
    high-level module, its inputs and PyTorch's outputs (cached per process)."""
    _check(name, shape)
    return _workload(name, shape, bool(quick))


@cache
def _workload(name: str, shape: str, quick: bool) -> Workload:
    from benchkill.inputs.torch_import import export_torch

    module, inputs, dim = build_model(name, quick)
    bound = sizes(name, quick)["bound"]
    dynamic = {"static": [], "bounded": [f"{dim}<={bound}"], "unbounded": [dim]}[shape]
    w = export_torch(module, inputs, dynamic=dynamic, name=name)
    size = "-".join(f"{k}{v}" for k, v in sizes(name, quick).items() if k != "bound")
    return Workload(
        name=f"{name}-{shape}-{size}",
        mod=w.mod,
        inputs=w.inputs,
        input_shapes=w.input_shapes,
        expected=w.expected,
        reference=w.reference,
        description=f"{name}, {w.description}",
    )


def kill_input(name: str, shape: str = "unbounded", quick: bool = True) -> Any:
    """The module of :func:`real_workload` lowered by TVM's default pipeline up to just
    before KillAfterLastUse: what the kill step receives inside ``relax.build`` (cached)."""
    _check(name, shape)
    return _kill_input(name, shape, bool(quick))


@cache
def _kill_input(name: str, shape: str, quick: bool) -> Any:
    from benchkill.relax.lowering import lower_to_kill_input

    return lower_to_kill_input(real_workload(name, shape, quick).mod)


def clear_cache() -> None:
    """Free the cached workloads and kill inputs (a module kept alive can slow a pass
    benchmark run in the same process: :mod:`benchkill.inputs.models`)."""
    _workload.cache_clear()
    _kill_input.cache_clear()
