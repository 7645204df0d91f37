"""Exact forward accounting along a known output, without running a model.

Under forced decoding along a known output -- the oracle program for Copy-as-Decode, the
gold text for the baselines -- the forwards a decoder runs (how many, how many ids each one
feeds, at which context length) depend only on the ids, never on the model. The paper's cost
model counts decode steps (§2.1: ``L_AR = tau T``; a copy op is one parallel-prefill forward,
§2.4; each op adds decision steps, Appendix H); this package counts them exactly, on every
case of a corpus, in seconds:

* :func:`autoregressive`: the prompt prefill, then one forward per output id
  (:func:`cadlib.decoding.methods.ar_along`);
* :func:`prompt_lookup`: ``transformers``' prompt-lookup drafting (draft length ``K``,
  n-gram size ``n``) with greedy verification along the gold, as
  :func:`cadlib.decoding.methods.prompt_lookup_along` drives it;
* :func:`copy_as_decode`: every forward of :class:`cadlib.decoding.decoder.CopyDecoder` in
  forced-program mode with minimum span ``m`` (Appendix J), from the program's transcript
  (:func:`cadlib.decoding.fsm.transcript`) and the decoder's own split of a feed into forwards
  (:func:`cadlib.decoding.decode_run.forward_chunks`);
* :func:`copy_reuse`: the same decoder with ``copy_kv="reuse"`` (issue 32): each copy's feed
  is one ``reuse`` forward of the ids it computes, after the matched ids it takes from the
  prompt's cache (:mod:`cadlib.decoding.kv_reuse`).

:func:`corpus_forwards` tabulates them per case, :func:`best_prompt_lookup` picks the one
prompt-lookup setting per corpus that fares best (the rival's best, fairly chosen), and
:func:`forwards_summary` gives per-corpus and pooled medians with bootstrap 95% intervals.
``tests/test_accounting.py`` checks every prediction against the decoders' traces.
"""

from . import corpora, forwards
from .corpora import *  # noqa: F403
from .forwards import *  # noqa: F403

__all__ = [*forwards.__all__, *corpora.__all__]
