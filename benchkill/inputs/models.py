"""The ``model`` input family: what KillAfterLastUse receives from real decoders.

A GPT-style decoder written with ``tvm.relax.frontend.nn`` (token embedding, ``layers``
pre-norm blocks of causal self-attention and a GELU MLP, a final LayerNorm and the
vocabulary projection), exported with a symbolic sequence length ``n`` and lowered by
TVM's default pipeline up to its kill step (:func:`benchkill.relax.lowering.lower_to_kill_input`).
The weights are parameters of ``main``, as in a real build, so no weights are downloaded
or stored: the IR is the same for any values (random ones are given only to run it).

Unlike the generated families this IR comes out of TVM's own passes: ``CallTIRRewrite``
leaves a trivial rebinding ``lv = alloc`` after every kernel call, ``split`` results are
tuples read item by item, and shapes are symbolic, so the kill pass takes its
canonicalization path on every function.

``generate(layers)`` builds a new module on every call (about 40 ms per layer on a 2-core
machine) and keeps none: a caller that needs one decoder many times keeps it itself (the
asv suite's ``benchmarks.common.pass_input``).  A decoder kept alive for the rest of a
process moved the pass suite's other cases: with the 49-layer decoder alive, TVM / benchkill
on a 3,000-binding chain rose by 9-15% in six processes of seven (TVM's pass slowed, the
floor and benchkill's pass far less), and freeing it took the ratio back (README
"pytest-benchmark").
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from benchkill.errors import BenchkillError
from benchkill.vocabulary import MODEL_FAMILY

if TYPE_CHECKING:
    import tvm

NAME = MODEL_FAMILY
#: layers -> hidden width of the decoder configurations (GPT-2 small to XL from 12 layers
#: on); another layer count takes the width of the nearest one listed.
HIDDEN = {1: 128, 2: 128, 4: 256, 8: 512, 12: 768, 24: 1024, 36: 1280, 48: 1600}
#: Dimension of one attention head, and the vocabulary size.
HEAD_DIM, VOCAB = 64, 1000


def hidden_for(layers: int) -> int:
    """The hidden width of the ``layers``-layer decoder (see :data:`HIDDEN`)."""
    nearest = min(HIDDEN, key=lambda k: (abs(k - layers), k))
    return HIDDEN[nearest]


def generate(layers: int, seed: int = 0) -> tvm.IRModule:
    """The kill pass's input for the ``layers``-layer decoder (``seed`` changes nothing:
    the weights are parameters).  A new module on every call, kept nowhere."""
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise BenchkillError(f"the number of layers must be a positive integer, got {layers!r}")
    return _lowered(layers, hidden_for(layers))


def _lowered(layers: int, hidden: int) -> tvm.IRModule:
    from benchkill.relax.lowering import lower_to_kill_input

    return lower_to_kill_input(decoder(layers, hidden))


def decoder(layers: int, hidden: int, seq: int | str = "n") -> tvm.IRModule:
    """The high-level module of the decoder (``main(ids, *weights)``), before lowering.

    ``seq`` is the sequence length: a name makes it symbolic, an int fixes it.
    """
    from tvm.relax.frontend import nn
    from tvm.relax.frontend.nn import op

    if hidden % HEAD_DIM:
        raise BenchkillError(f"hidden width {hidden} is not a multiple of {HEAD_DIM}")
    heads = hidden // HEAD_DIM

    class Attention(nn.Module):
        def __init__(self) -> None:
            self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
            self.out = nn.Linear(hidden, hidden, bias=False)

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            b, s, _ = x.shape
            qkv = op.reshape(self.qkv(x), (b, s, 3, heads, HEAD_DIM))
            q, k, v = (op.reshape(t, (b, s, heads, HEAD_DIM)) for t in op.split(qkv, 3, axis=2))
            o = op.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.out(op.reshape(o, (b, s, hidden)))

    class Block(nn.Module):
        def __init__(self) -> None:
            self.ln1 = nn.LayerNorm(hidden)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(hidden)
            self.fc1 = nn.Linear(hidden, 4 * hidden)
            self.fc2 = nn.Linear(4 * hidden, hidden)

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            x = x + self.attn(self.ln1(x))
            return x + self.fc2(op.gelu(self.fc1(self.ln2(x))))

    class Decoder(nn.Module):
        def __init__(self) -> None:
            self.embed = nn.Embedding(VOCAB, hidden)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln = nn.LayerNorm(hidden)
            self.head = nn.Linear(hidden, VOCAB, bias=False)

        def main(self, ids: nn.Tensor) -> nn.Tensor:  # the exported function's name
            x = self.embed(ids)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    spec = {"main": {"ids": nn.spec.Tensor([1, seq], "int32")}}
    mod, _params = Decoder().export_tvm(spec=spec)
    return mod


@cache
def size_model() -> tuple[float, float]:
    """(fixed bindings, bindings per layer), from the 1- and 2-layer decoders (exact)."""
    from benchkill.relax.counting import count_bindings

    one, two = (count_bindings(_lowered(n, HIDDEN[1])) for n in (1, 2))
    return float(2 * one - two), float(two - one)
