"""SqueezeNet 1.0, dynamic batch with no bound, batch 8 at 64x64, naive allocator: the peak
with no kills and with TVM's, in bytecode and compiled mode, and the traced run's parts.

Usage: ``python docs/notes/squeezenet_batch8.py OUT.jsonl`` (``PARAMS=inputs`` in the
environment: the weights as trailing inputs instead of constants).  One JSON line per
measurement; docs/notes/real-models.md has the table.
"""

import json
import os
import sys

import torch
import torchvision

from benchkill import VMOptions, measure_vm
from benchkill.inputs.torch_import import export_torch

torch.manual_seed(0)
model = torchvision.models.squeezenet1_0(weights=None)
x = torch.randn(8, 3, 64, 64, generator=torch.Generator().manual_seed(0))
params = os.environ.get("PARAMS", "constants")
w = export_torch(model, (x,), dynamic="x:0", name="squeezenet1_0", params=params)
with open(sys.argv[1], "a") as out:
    for mode in ("bytecode", "compiled"):
        options = VMOptions(mode, "naive", repeat=0, peak_repeat=3, timeline=False)
        for kill in (None, "tvm"):
            r = measure_vm(w.mod, list(w.inputs), options, kill=kill, trace=True)
            s = r.trace_summary
            parts = s.peak_parts.as_dict() if s and s.peak_parts else None
            row = dict(params=params, mode=mode, kill=kill, ok=r.ok, error=r.error,
                       peak=r.peak_bytes, peaks=r.peaks, parts=parts)
            out.write(json.dumps(row) + "\n")
            print(row, flush=True)
