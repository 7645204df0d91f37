"""Chapter 6c (beyond the paper): copies without prefill, measured (issue 32).

The reuse copy mode (:mod:`cadlib.decoding.kv_reuse`, ``CopyDecoder(copy_kv="reuse")``) takes each
copied id's KV entries from the prompt's numbered document instead of computing them. This
package measures what that is worth and what it costs, deterministic parts first:

* :func:`reuse_shares` — the **reusable share** per corpus and tokenizer, no model: of the
  spliced ids along the oracle program, how many each recompute policy reuses
  (:func:`cadlib.costs.accounting.copy_sources`);
* :func:`agreement_rows` — **agreement with exact decoding**, teacher-forced along the oracle
  program: at every decision (op choices, range digits, ``<gen>`` ids) the reuse decoder's
  masked greedy choice against the exact splice's, and the KL divergence of the masked
  distributions (exact || reuse);
* :func:`flip_table` — **where decisions flip**: the held-out flips by decision kind and by
  ids since the last copy (:mod:`.flips`);
* :func:`free_run_rows` — **free-run output identity**: the model decoding on its own, exact
  and reuse, transcripts compared id for id (:mod:`.free_run`);
* :mod:`.policy_search`, :mod:`.every_case` and :mod:`.flask_sample` (imported on their own:
  they are commands) — a recompute policy **chosen on development cases** from a wider grid,
  judged on fresh held-out cases, then on every case of the held-out HumanEvalFix corpora and
  on fresh, long Flask edits (their own committed runs, ``results/kv_reuse.policy.json``,
  ``results/kv_reuse.every-<corpus>.json`` and ``results/kv_reuse.flask-sample.json``);
* :func:`time_modes` — wall-clock of the exact splice, ``+drafts`` and reuse, interleaved
  (the ``timing`` and ``full`` profiles, on a quiet machine only; never evidence from a busy
  one), and :func:`speed_goals` — issue 32's speed goals, judged at the policy that meets the
  threshold on every held-out HumanEvalFix case (:func:`.every_case.accepted_policy`).

The acceptance threshold is declared here, before any measurement (:data:`AGREEMENT_THRESHOLD`).
Policies are tuned on the development corpora (:data:`DEV`); held-out numbers come from
:data:`TEST` only.
"""

from . import chapter, flips, free_run, speed
from .chapter import *  # noqa: F403
from .flips import *  # noqa: F403
from .free_run import *  # noqa: F403
from .speed import *  # noqa: F403

__all__ = [*chapter.__all__, *flips.__all__, *free_run.__all__, *speed.__all__]
