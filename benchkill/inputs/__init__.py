"""Where modules come from: generated, written with ``relax.frontend.nn``, or brought.

- generated lowered modules: :mod:`.families` (the pass suite's families), built from the
  shared PrimFuncs and IR leaves of :mod:`.kernels`; :mod:`.models` (the ``model`` family:
  real decoders lowered to the kill step);
- the VM workloads and their one registry: :mod:`.workloads`, with the real models of
  :mod:`.networks` (``relax.frontend.nn``) and :mod:`.real_models` (PyTorch, three shape
  modes), and their inputs from :mod:`.arguments`;
- the models users bring: :mod:`.entry_points` (``package.module:function``),
  :mod:`.python_model` (a Relax module from Python), :mod:`.torch_import` (PyTorch via
  ``torch.export``), :mod:`.onnx_import` (ONNX files), with one dynamic-dimension spelling
  (:mod:`.dynamic`).

Imports only :mod:`benchkill.relax` and :mod:`benchkill.errors`."""
