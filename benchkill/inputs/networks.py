"""Real models written with ``tvm.relax.frontend.nn``, random weights (nothing downloaded).

- :func:`gpt2`: a GPT-2-style decoder: token and position embeddings, pre-LayerNorm
  blocks (causal ``scaled_dot_product_attention``, GELU MLP of width ``4 * hidden``), a
  final LayerNorm and an LM head tied to the token embedding.  Batch 1, symbolic
  sequence length ``seq``.  GPT-2 small is 12 layers, hidden 768, 12 heads, vocabulary
  50257; the registry uses a 4096-word vocabulary: the tied head computes
  ``permute_dims(wte.weight)``, a fresh transposed copy of the embedding on every run
  (147 MiB at 50257 words, the largest buffer of the run by far), and the logits
  ``(seq, vocab)``; with 4096 words the peak is made of the layers' activations and the
  runs take seconds instead of minutes.
- :func:`convnet`: a residual convolutional network, NCHW with a symbolic batch: a stem
  convolution, then per stage a residual block (two 3x3 convolutions and a skip) and a
  stride-2 convolution that halves the resolution and doubles the channels, then a
  global average and a linear classifier.  Its activations shrink stage by stage, so its
  peak with kills is at the first stage, whereas without kills every stage adds up: the
  opposite memory shape of a transformer, whose layers all have the same activations.

Both return the exported module and the weights as numpy arrays, in the order of the
entry function's parameters after the model inputs (LayerNorm weights 1, biases 0,
other weights normal with a fixed seed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchkill.errors import BenchkillError, check_int


def _weights(params: Any, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for name, param in params:
        shape = tuple(int(s) for s in param.shape)
        if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight", "norm.weight")):
            out.append(np.ones(shape, "float32"))
        elif name.endswith(".bias"):
            out.append(np.zeros(shape, "float32"))
        else:
            scale = 0.02 if len(shape) <= 2 else 1.0 / np.sqrt(np.prod(shape[1:]))
            out.append((scale * rng.standard_normal(shape, dtype=np.float32)).astype("float32"))
    return out


def gpt2(
    layers: int, hidden: int, heads: int, vocab: int, seq: int, positions: int = 1024
) -> tuple[Any, list[np.ndarray], list[np.ndarray]]:
    """GPT-2-style decoder; returns the module (entry ``forward``), its model inputs
    ``(input_ids, position_ids)`` for a sequence of ``seq`` tokens, and the weights."""
    from tvm.relax.frontend import nn

    for value, what in ((layers, "layers"), (hidden, "hidden"), (heads, "heads")):
        check_int(value, what)
    check_int(vocab, "vocab")
    check_int(positions, "positions")
    check_int(seq, "seq", high=positions)
    if hidden % heads:
        raise BenchkillError(f"hidden ({hidden}) must be a multiple of heads ({heads})")
    head_dim = hidden // heads

    class Attention(nn.Module):
        def __init__(self) -> None:
            self.c_attn = nn.Linear(hidden, 3 * hidden)
            self.c_proj = nn.Linear(hidden, hidden)

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            b, s, _ = x.shape
            qkv = nn.op.reshape(self.c_attn(x), [b, s, 3, heads, head_dim])
            q, k, v = nn.op.split(qkv, 3, axis=2)
            q, k, v = (nn.op.reshape(t, [b, s, heads, head_dim]) for t in (q, k, v))
            o = nn.op.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(nn.op.reshape(o, [b, s, hidden]))

    class MLP(nn.Module):
        def __init__(self) -> None:
            self.c_fc = nn.Linear(hidden, 4 * hidden)
            self.c_proj = nn.Linear(4 * hidden, hidden)

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            return self.c_proj(nn.op.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self) -> None:
            self.ln_1 = nn.LayerNorm(hidden)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(hidden)
            self.mlp = MLP()

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT2(nn.Module):
        def __init__(self) -> None:
            self.wte = nn.Embedding(vocab, hidden)
            self.wpe = nn.Embedding(positions, hidden)
            self.h = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(hidden)

        def forward(self, input_ids: nn.Tensor, position_ids: nn.Tensor) -> nn.Tensor:
            x = self.wte(input_ids) + self.wpe(position_ids)
            for block in self.h:
                x = block(x)
            # the tied LM head: logits = x @ wte.weight^T
            return nn.op.matmul(self.ln_f(x), nn.op.permute_dims(self.wte.weight, [1, 0]))

    spec = {
        "forward": {
            "input_ids": nn.spec.Tensor([1, "seq"], "int32"),
            "position_ids": nn.spec.Tensor([1, "seq"], "int32"),
        }
    }
    mod, params = GPT2().export_tvm(spec=spec)
    ids = np.random.default_rng(1).integers(0, vocab, size=(1, seq)).astype("int32")
    pos = np.arange(seq, dtype="int32").reshape(1, seq)
    return mod, [ids, pos], _weights(params, 0)


def convnet(
    batch: int, size: int, channels: int, stages: int, classes: int = 10
) -> tuple[Any, list[np.ndarray], list[np.ndarray]]:
    """Residual conv net on ``(batch, 3, size, size)`` images (batch symbolic in the
    module); returns the module (entry ``forward``), the images and the weights."""
    from tvm.relax.frontend import nn

    check_int(batch, "batch")
    check_int(channels, "channels")
    check_int(classes, "classes")
    stages = check_int(stages, "stages")
    size = check_int(size, "size")
    if size % (1 << stages):
        raise BenchkillError(f"size ({size}) must be a multiple of 2**stages ({1 << stages})")

    class Residual(nn.Module):
        def __init__(self, c: int) -> None:
            self.conv1 = nn.Conv2D(c, c, 3, padding=1)
            self.conv2 = nn.Conv2D(c, c, 3, padding=1)

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            return nn.op.relu(x + self.conv2(nn.op.relu(self.conv1(x))))

    class Stage(nn.Module):
        def __init__(self, c: int) -> None:
            self.block = Residual(c)
            self.down = nn.Conv2D(c, 2 * c, 3, stride=2, padding=1)

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            return nn.op.relu(self.down(self.block(x)))

    class ConvNet(nn.Module):
        def __init__(self) -> None:
            self.stem = nn.Conv2D(3, channels, 3, padding=1)
            self.stages = nn.ModuleList([Stage(channels << i) for i in range(stages)])
            self.head = nn.Linear(channels << stages, classes)

        def forward(self, x: nn.Tensor) -> nn.Tensor:
            x = nn.op.relu(self.stem(x))
            for stage in self.stages:
                x = stage(x)
            side = size >> stages
            pooled = nn.op.sum(x, axis=[2, 3]) * (1.0 / (side * side))
            return self.head(pooled)

    spec = {"forward": {"x": nn.spec.Tensor(["batch", 3, size, size], "float32")}}
    mod, params = ConvNet().export_tvm(spec=spec)
    images = np.random.default_rng(1).standard_normal((batch, 3, size, size), dtype=np.float32)
    return mod, [images], _weights(params, 0)
