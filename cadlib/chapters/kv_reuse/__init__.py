"""Chapter 6c (beyond the paper): copies without prefill, measured (issue 32).

The reuse copy mode (:mod:`cadlib.decoding.kv_reuse`, ``CopyDecoder(copy_kv="reuse")``) takes each
copied id's KV entries from the prompt's numbered document instead of computing them. This
package measures what that is worth and what it costs, deterministic parts first:

* the **reusable share** per corpus and tokenizer, no model (:func:`.run.reuse_shares`): of
  the spliced ids along the oracle program, how many each recompute policy reuses
  (:func:`cadlib.costs.accounting.copy_sources`);
* **agreement with exact decoding** (:func:`.run.agreement_rows`), teacher-forced along the
  oracle program: at every decision (op choices, range digits, ``<gen>`` ids) the reuse
  decoder's masked greedy choice against the exact splice's, and the KL divergence of the
  masked distributions (exact || reuse);
* **where decisions flip** (:func:`.run_flips.flip_table`): the held-out flips by decision
  kind and by ids since the last copy;
* **free-run output identity** (:func:`.run.free_run_rows`): the model decoding on its own,
  exact and reuse, transcripts compared id for id;
* a recompute policy **chosen on development cases** from a wider grid, judged on fresh
  held-out cases (:mod:`.run_policy_search`), then on every case of the held-out
  HumanEvalFix corpora (:mod:`.run_every_case`) and on fresh, long Flask edits
  (:mod:`.run_flask_sample`): their own committed runs (``results/kv_reuse.policy.json``,
  ``results/kv_reuse.every-<corpus>.json`` and ``results/kv_reuse.flask-sample.json``),
  recorded by :mod:`.commands`;
* issue 51's **selection rules** (:mod:`cadlib.decoding.kv_select`: seams, key deviation at a
  check layer, both), compared on development corpora (:mod:`.run_rules`,
  ``results/kv_reuse.rules.json``, and its margin-gated fallback, ``kv_reuse.gated.json``; the
  choice declared in :mod:`.profiles` before it ran), then the chosen setting once on the test
  corpora (:mod:`.run_rules_test`, ``results/kv_reuse.rules-test.json``);
* wall-clock of the exact splice, ``+drafts`` and reuse, interleaved
  (:func:`.run_speed.time_modes`; the ``timing`` and ``full`` profiles, on a quiet machine
  only; never evidence from a busy one), and issue 32's speed goals
  (:func:`.run_speed.speed_goals`), judged at the development search's policy.

Agreement is read where a policy reuses prompt entries (:func:`.run.reusing_table`): a case
that reuses none recomputes every copied id and agrees by construction.

The acceptance threshold is declared in :mod:`.profiles`, before any measurement
(``AGREEMENT_THRESHOLD``: the agreement of transformers with llama.cpp's Q4_1 weights).
Policies are tuned on the development corpora (``DEV``); held-out numbers come from ``TEST``
only (its four HumanEvalFix languages translate one task set; RealEdits-Flask was a goal
corpus while chapter 6's drafts were designed, so it is development for speed).

The roles (CONTRIBUTING, "A chapter package"): :mod:`.profiles` (``PROFILES`` and the
declarations), :mod:`.run` (the notebook's measurements and :func:`.run.numbers`, the results
file's ``numbers``) with :mod:`.run_flips`, :mod:`.run_speed` and the committed runs'
protocols (:mod:`.run_policy_search`, :mod:`.run_every_case`, :mod:`.run_flask_sample`,
:mod:`.run_rules`, :mod:`.run_rules_test`), :mod:`.show` (figures and tables), :mod:`.text`
(the answer and the findings) with one ``text_<topic>`` module per committed run, and
:mod:`.commands`.
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]
__getattr__ = lazy_roles(__name__)
