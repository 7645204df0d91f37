"""Chapter 6b: Copy-as-Decode on llama.cpp beside ``transformers`` (issue 18).

The same GGUF model (SmolLM2-135M-Instruct) on two engines (:mod:`cadlib.decoding.engines`),
llama.cpp with the file as shipped (Q4_1) and converted to F16 weights
(:func:`.run.load_engines`), the same cases, the same gold outputs. Per engine:

* the kernel curve ``s(N) = T_AR(N) / T_PP(N)`` (:func:`.run.kernel_curves`: chapter 2's timer,
  :mod:`cadlib.costs.kernel_timing`, which runs on any engine);
* three methods along each case's gold (as chapter 6, :mod:`cadlib.chapters.decoding.run_timing`,
  with the same code: :mod:`cadlib.decoding.methods` runs on any engine), timed interleaved by
  :func:`cadlib.costs.method_timing.time_methods`: autoregressive, prompt lookup with each
  engine's own n-gram drafter (on llama.cpp the binding's ``LlamaPromptLookupDecoding``,
  :meth:`cadlib.decoding.engines.Engine.lookup_drafter`) at the best of a small grid of
  settings (:func:`cadlib.costs.method_timing.best_lookup_setting`), and forced-oracle
  Copy-as-Decode (:class:`cadlib.decoding.decoder.CopyDecoder` on the engine);
* edit latency (seconds after the prompt prefill, and with it) and output tokens per second
  (:func:`.run.speed_table`, :func:`.run.seconds_by_kind`).

How often each llama.cpp engine's greedy next-id decisions agree with fp32 ``transformers``
along the gold is :func:`cadlib.decoding.engine_agreement.greedy_agreements`.

The roles (CONTRIBUTING, "A chapter package"): :mod:`.profiles` (``PROFILES``, the models'
labels), :mod:`.run` (engines, sample, curves, tables and ``numbers``, the results dict),
:mod:`.show` (the draft-cap run's table), :mod:`.text` (the generated prose) and
:mod:`.commands` (``python -m cadlib.chapters.llama_cpp.commands drafts``: the run that picks
each engine's draft cap, :mod:`cadlib.costs.draft_policy`).
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]

__getattr__ = lazy_roles(__name__)
