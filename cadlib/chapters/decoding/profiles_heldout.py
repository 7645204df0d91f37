"""Chapter 6's held-out speed protocol, declared before any test corpus is run.

The question a user asks: on edits nobody here looked at, how much faster is Copy-as-Decode than
what I would use instead? Everything below is fixed in code and committed before the run
(``python -m cadlib.chapters.decoding.commands heldout``, :mod:`.run_heldout`):

* **Test corpora** (:data:`TEST_CORPORA`): real commits of psf/requests and spf13/cobra, never
  used to choose anything, and the four HumanEvalFix languages other than the development
  ones. Those four translate the same 164 tasks as the development languages, so they are one
  family (:data:`HUMANEVALFIX_TEST`), reported per language and as the family.
* **Sample** (:data:`TIMED_CASES`, :data:`SEED`, :data:`CONTEXT`): per corpus, length strata
  of equal size among the cases whose prompt and gold fit the model's context together, one
  seeded case from each (:func:`cadlib.decoding.methods.timed_sample`); prompts uncapped.
* **Methods** (:data:`METHODS`) on both engines (:data:`ENGINES`), each producing the same gold:
  autoregressive, prompt lookup, forced-oracle Copy-as-Decode plain and ``+drafts``.
* **The rival at its best** (:data:`RIVAL_SELECTION`): prompt lookup's setting is chosen per
  engine by measured decode time on development cases only, in the same run on the same
  machine, from a declared grid; the test corpora never see another setting.
* **Timing** (:data:`REPEATS`, :data:`AR_REPEATS`, :data:`THREADS`): one run per engine (a part,
  :func:`results_name`), every method of that engine in rotating order per case; autoregressive
  decoding of a long file is about as many forwards as ids, so it runs once per case while the
  faster methods repeat; the load of other processes is recorded for the whole part. A part
  holds its own baseline, so each engine's verdicts need only its own part.
* **The cost model** (:data:`GRID`): the forward-cost grid is measured in the ``transformers``
  part, every case of every test corpus is priced on it (exact forward accounting),
  and its error against the clock is reported on the timed test cases themselves.
* **Statistics** (:data:`QUANTITY`, :data:`BOOTSTRAP`): per corpus and per engine, the
  median-case speedup over autoregressive decoding with a bootstrap interval by case, the
  share of cases where each method is slower than autoregressive decoding, and the ratio of
  each Copy-as-Decode variant to the best rival (:data:`RIVALS`).
* **Goals** (:data:`GOALS`), judged on the test corpora only and on each engine.

**Budget** (measured on 2 quiet AMD EPYC cores, two threads, before any test run): a
``transformers`` one-id step costs 60-90 ms and a prompt prefill 1.3 s / 5.5 s / 13.3 s at 512 /
2,048 / 4,096 ids; llama.cpp (Q4_1) 12-30 ms and 2.6 s / 11.7 s / 28.8 s. The sample's 24
real-edit cases hold 34,718 target ids (its HumanEvalFix cases 2,309), and every run of every
method prefills its prompt, so each part takes about an hour and a half to two hours: the two
parts are run separately, each on a quiet machine.

Torch-free, so the book's pages and tests can read it.
"""

from __future__ import annotations

from cadlib.corpora import REALEDITS_TEST
from cadlib.costs import heldout_report
from cadlib.decoding.method_names import DRAFTED, TIMED
from cadlib.models import SMOLLM2
from cadlib.record.results import read_results_file

__all__ = [
    "HUMANEVALFIX_TEST",
    "REAL_EDIT_TEST",
    "TEST_CORPORA",
    "DEVELOPMENT",
    "TIMED_CASES",
    "SEED",
    "CONTEXT",
    "MODEL",
    "ENGINES",
    "THREADS",
    "LLAMA_CPP_CONTEXT",
    "METHODS",
    "RIVALS",
    "REPEATS",
    "AR_REPEATS",
    "WARMUP",
    "RIVAL_SELECTION",
    "GRID",
    "QUANTITY",
    "BOOTSTRAP",
    "GOALS",
    "COMMAND",
    "results_name",
    "committed_parts",
    "FAMILY",
    "ALL_TEST",
    "SMOKE",
]

#: The four HumanEvalFix test languages: one family (they translate the development tasks).
HUMANEVALFIX_TEST = ("heval-fix-java", "heval-fix-go", "heval-fix-cpp", "heval-fix-rust")
#: Real commits nobody here looked at (``../shared/data/realedits/README.md``).
REAL_EDIT_TEST = REALEDITS_TEST
TEST_CORPORA = (*REAL_EDIT_TEST, *HUMANEVALFIX_TEST)
#: Development corpora: the rival's setting is chosen on cases of these only.
DEVELOPMENT = ("heval-fix-py", "heval-fix-js", "probeedit", "realedits-flask")

#: Timed cases per test corpus (length strata, one seeded case each).
TIMED_CASES = {
    "realedits-requests": 12,
    "realedits-cobra": 12,
    **{c: 6 for c in HUMANEVALFIX_TEST},
}
SEED = 0
#: SmolLM2's context: a case is eligible when its longer prompt and its gold fit it together.
CONTEXT = 8192

MODEL = SMOLLM2
#: The engines, one at a time on the whole machine (chapter 6b's setting): ``transformers``
#: (fp32, the GGUF dequantized) and llama.cpp on the GGUF as shipped (Q4_1).
ENGINES = ("transformers", "llama.cpp")
#: Threads per engine: both cores of the quiet 2-core machine, as a CPU user runs an engine.
THREADS = 2
#: llama.cpp's cache size (``n_ctx``). A case fits :data:`CONTEXT` by its prompt and gold ids,
#: but a Copy-as-Decode transcript adds its program's structure ids (headers, ranges, closers)
#: and a draft is fed before it is verified, so a case near the limit ran past 8,192 cached ids
#: and stopped the first llama.cpp run (2026-12-07, before any of its results were kept); the
#: outputs are forced, so positions past the trained context change no output. ``transformers``'
#: cache has no cap.
LLAMA_CPP_CONTEXT = 2 * 8192
#: The timed methods (:data:`cadlib.decoding.methods.TIMED`), the same on both engines.
METHODS = TIMED
#: The rivals a Copy-as-Decode variant is compared with: per corpus and engine, the one with the
#: lower median-case latency is "the best rival" there.
RIVALS = ("autoregressive", "prompt lookup")
#: Timed repeats of every method but autoregressive decoding, interleaved (median per case;
#: two, not three, so that a part fits about two hours: see the budget above).
REPEATS = 2
#: Autoregressive decoding is timed once per case: ~one forward per output id.
AR_REPEATS = 1
#: Untimed warm-up runs of every (engine, method) on the shortest case first.
WARMUP = 1
#: Prompt lookup's setting per engine: the least pooled decode seconds over these development
#: cases (length strata among those of at most ``max_ids`` gold ids, seed :data:`SEED`, the same
#: eligibility; the cap keeps the selection to minutes), one run per setting, after a warm-up.
#: The grid spans the settings chapters 6 and 6b found best by time (K=40 n=3 on
#: ``transformers`` predicted, K=20 n=3 on llama.cpp measured) and ``transformers``' default.
RIVAL_SELECTION = dict(
    cases={"realedits-flask": 2, "heval-fix-py": 2},
    max_ids=1500,
    grid=((10, 2), (20, 3), (40, 3)),
)
#: The forward-cost grid measured in the run on ``transformers`` (chapter 6's cost model),
#: with contexts up to the model's context.
GRID = dict(contexts=(128, 512, 1024, 2048, 4096, 8192), trials=2)
#: The latency a goal names: ``wall_s``, from the prompt's prefill to the last output id (what a
#: user waits); ``decode_s`` (after the prefill) is reported beside it.
QUANTITY = "wall_s"
#: Percentile bootstrap of the median case, resampling cases (seeded).
BOOTSTRAP = dict(resamples=2000, seed=SEED, level=0.95)

#: The goals, judged on the timed test cases, on each engine separately.
GOALS = (
    dict(
        key="real-edits-2x",
        text=f"{DRAFTED} ≥ 2× the best rival on each real-edit test corpus (median case)",
        method=DRAFTED,
        corpora=REAL_EDIT_TEST,
        each=True,
        ratio=2.0,
    ),
    dict(
        key="humanevalfix-faster",
        text=f"{DRAFTED} faster than the best rival on the HumanEvalFix test family (median case)",
        method=DRAFTED,
        corpora=HUMANEVALFIX_TEST,
        each=False,
        ratio=1.0,
    ),
    dict(
        key="slower-than-ar",
        text=f"{DRAFTED} slower than autoregressive decoding on at most 5 % of test cases",
        method=DRAFTED,
        corpora=TEST_CORPORA,
        each=False,
        max_share_slower=0.05,
    ),
)

#: The command that records a part (``--engine`` names it; the costs wing's reader names it too).
COMMAND = heldout_report.COMMAND


def results_name(engine: str) -> str:
    """The committed part of one engine: ``decoding.heldout.<engine>.json`` (``llama.cpp`` ->
    ``llama-cpp``); its timed rows sit beside it (``<name>.rows.jsonl``)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; the protocol's engines: {ENGINES}")
    return heldout_report.part_name(engine)


def committed_parts() -> dict[str, dict]:
    """The recorded parts by engine (``results/decoding.heldout.<engine>.json``)."""
    parts = {e: read_results_file(results_name(e)) for e in ENGINES}
    return {e: p for e, p in parts.items() if p is not None}


#: Group names of the statistics beside the corpora: the HumanEvalFix test family and every
#: test case (:mod:`.run_heldout_stats`).
FAMILY, ALL_TEST = "HumanEvalFix test family", "all test cases"


#: The same pipeline in about a minute, for tests and a dry run: the tiny random Qwen2 stand-in
#: on two development cases, one setting, a small grid (its times mean nothing).
SMOKE = dict(
    model="qwen2-smoke",
    corpora={"heval-fix-py": 2},
    selection=dict(cases={"heval-fix-py": 1}, max_ids=None, grid=((10, 2),)),
    grid=dict(contexts=(64, 256), trials=1),
    repeats=1,
)
