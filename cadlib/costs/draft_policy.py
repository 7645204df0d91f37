"""Each engine's draft cap (issue 32, "Also"): drafts must never make Copy-as-Decode slower.

A verify forward feeds the feed's ids and the whole draft, and the engine computes the logits
of every drafted position; a rejected tail is compute that nothing uses. What that costs is the
engine's: on ``transformers`` on a CPU a forward has a large fixed cost and a fed id is cheap,
on llama.cpp the fixed cost is small and an id of Q4_1 weights is dear (chapter 2's and 6b's
s(N)). So the longest draft verified at once is a per-engine policy,
:attr:`cadlib.decoding.engines.Engine.draft_max_ids`, chosen here by measurement.

The protocol, fixed before measuring (:data:`PROTOCOL`):

* **engines**: chapter 6b's cpu setting: SmolLM2-135M-Instruct on ``transformers`` (fp32) and
  on llama.cpp as shipped (Q4_1) and converted to F16, two threads each, one at a time;
* **development** (:data:`DEV`): HumanEvalFix-Py, -JS and ProbeEdit, chapter 6's stratified
  sample; arms: the plain decoder and the drafted one (``m=0 +cursor +headers``) at every cap of
  :data:`CAPS`, interleaved in rotating order, ``repeats`` times;
* **the rule**: per engine the cap with the least pooled decode time (per case the median over
  repeats, summed); a cap within :data:`TIE` of the least counts as tied and the longest tied
  cap wins (no cap counts as the longest), so a cap is adopted only where it beats a longer
  one by more than noise;
* **test** (:data:`TEST`, held out from the rule: corpora it never saw): HumanEvalFix-Java, -Go
  (which translate the development tasks) and RealEdits-Flask (a goal corpus while the drafts
  were designed); arms: plain, drafts without a cap, drafts at the chosen cap; the verdict per
  engine and corpus is whether the drafted decoder at the chosen cap took no more pooled
  decode time than the plain one. It can fail, and a failure is reported, not re-tuned.

Run it on a quiet machine (about 20 minutes on 2 cores) with chapter 6b's command::

    python -m cadlib.chapters.llama_cpp.commands drafts --out results/llama_cpp.drafts.json

Chapter 6b shows the committed run (:func:`committed`; its table and verdict are the
chapter's ``show.policy_table`` and ``text.policy_markdown``); ``tests/test_draft_policy.py``
checks that the engines' caps are the run's choices.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from cadlib.corpora import load_corpus
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.drafts import composition_drafts
from cadlib.decoding.methods import DRAFTED_SETTING, timed_sample
from cadlib.record.provenance import monitor
from cadlib.record.results import read_results_file, run_report, write_run_report

from .method_timing import interleaved

__all__ = [
    "COMMITTED",
    "CAPS",
    "TIE",
    "DEV",
    "TEST",
    "PROTOCOL",
    "arm_label",
    "arms",
    "time_arms",
    "pooled",
    "choose_caps",
    "verdicts",
    "case_ratios",
    "draft_policy_run",
    "committed",
]

#: The committed run chapter 6b shows.
COMMITTED = "llama_cpp.drafts.json"
#: The caps tried on the development cases (``None``: no cap, the drafts as they are).
CAPS = (None, 32, 16, 8)
#: Pooled times within this share of the least are tied (the longest tied cap wins).
TIE = 0.03
#: ``{corpus: (cases, cap on a case's gold ids)}`` of the development and the test sample.
DEV = {"heval-fix-py": (3, 300), "heval-fix-js": (3, 300), "probeedit": (2, 800)}
TEST = {"heval-fix-java": (3, 300), "heval-fix-go": (3, 300), "realedits-flask": (3, 800)}
#: Everything the run fixes before it measures (recorded with it).
PROTOCOL = dict(
    model="smollm2-135m-instruct",
    threads=2,
    gguf_types=[None, "f16"],
    drafts=DRAFTED_SETTING,
    caps=list(CAPS),
    tie=TIE,
    dev=DEV,
    test=TEST,
)


def arm_label(cap) -> str:
    """The arm of the drafted decoder at ``cap``: ``"drafts"`` (no cap) or ``"drafts<=K"``."""
    return "drafts" if cap is None else f"drafts<={cap}"


def _length(cap) -> float:
    """Sort key: the longest cap first (no cap is longer than any)."""
    return float("-inf") if cap is None else -cap


def arms(engine, tokenizer, caps) -> dict:
    """``{arm: CopyDecoder}`` on ``engine``: ``plain`` (no drafts) and the drafted decoder at
    each cap of ``caps`` (``"drafts"``: no cap, ``"drafts<=K"``: at most K ids)."""
    drafts = composition_drafts(DRAFTED_SETTING)
    out = {"plain": CopyDecoder(engine, tokenizer)}
    for cap in caps:
        out[arm_label(cap)] = CopyDecoder(engine, tokenizer, drafts=drafts, draft_max_ids=cap)
    return out


def sample(spec: dict, tokenizer, seed: int = 0) -> list:
    """The cases of ``spec`` (``{corpus: (n, max gold ids)}``), chapter 6's stratified rule."""
    return [
        x
        for name, (n, cap) in spec.items()
        for x in timed_sample(name, load_corpus(name), n, tokenizer, cap, seed)
    ]


def _decode(decoder: CopyDecoder, x):
    res = decoder.decode(x.case.doc, prompt_ids=x.edit_prompt, program=x.program)
    if res.text != x.case.gold:
        raise RuntimeError(f"a forced run missed the gold of {x.case.id}")
    return res.trace


def time_arms(
    engines: list,
    tokenizer,
    inputs: list,
    caps,
    repeats: int = 2,
    warmup: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Every arm (:func:`arms`) of every engine on every case, ``repeats`` times, in rotating
    order per repeat and case (after ``warmup`` runs of each on the shortest case;
    :func:`cadlib.costs.method_timing.interleaved`). One row per run: engine, corpus, case,
    arm, repeat, decode and wall seconds, forwards, draft ids."""
    jobs = [(e, name, dec) for e in engines for name, dec in arms(e, tokenizer, caps).items()]

    def run(job, x, repeat):
        engine, name, dec = job
        tr = _decode(dec, x)
        return dict(
            engine=engine.name,
            corpus=x.corpus,
            case=x.case.id,
            arm=name,
            repeat=repeat,
            T=len(x.target) - 1,
            decode_s=tr.decode_s,
            wall_s=tr.wall_s,
            forwards=tr.n_forwards - 1,
            draft_ids=tr.info.get("draft_ids", 0),
            draft_accepted=tr.info.get("draft_accepted", 0),
        )

    rows = interleaved(jobs, inputs, run, repeats, warmup, "draft caps", progress)
    return pd.DataFrame(rows)


def pooled(rows: pd.DataFrame, by=("engine", "arm")) -> pd.DataFrame:
    """Per ``by``: the decode seconds pooled over cases (each case's median over repeats,
    summed), the cases, and the forwards and draft ids of one repeat."""
    per_case = (
        rows.groupby([*by, "case"])
        .agg(
            decode_s=("decode_s", "median"),
            forwards=("forwards", "first"),
            draft_ids=("draft_ids", "first"),
            draft_accepted=("draft_accepted", "first"),
        )
        .reset_index()
    )
    return per_case.groupby(list(by)).agg(
        cases=("case", "nunique"),
        decode_s=("decode_s", "sum"),
        forwards=("forwards", "sum"),
        draft_ids=("draft_ids", "sum"),
        draft_accepted=("draft_accepted", "sum"),
    )


def choose_caps(dev: pd.DataFrame, caps=CAPS, tie: float = TIE) -> dict:
    """``{engine: cap}`` by the rule of the module docstring: the longest cap whose pooled
    development decode time is within ``tie`` of the least (``None`` counts as the longest)."""
    table = pooled(dev[dev.arm != "plain"])
    out = {}
    for engine, group in table.groupby(level="engine"):
        times = group.droplevel("engine")["decode_s"]
        best = times.min()
        longest_first = sorted(caps, key=_length)
        out[engine] = next(c for c in longest_first if times[arm_label(c)] <= best * (1 + tie))
    return out


def verdicts(test: pd.DataFrame, chosen: dict) -> pd.DataFrame:
    """Per engine and corpus of the test run: pooled decode seconds of the plain decoder, the
    uncapped drafts and the drafts at the engine's chosen cap, the last over the plain one, and
    whether the chosen drafts were never slower than plain there (the verdict)."""
    table = pooled(test, by=("engine", "corpus", "arm"))["decode_s"].unstack("arm")
    rows = []
    for (engine, corpus), row in table.iterrows():
        policy = row[arm_label(chosen[engine])]
        rows.append(
            dict(
                engine=engine,
                corpus=corpus,
                cap=chosen[engine],
                plain_s=row["plain"],
                drafts_s=row["drafts"],
                policy_s=policy,
                policy_over_plain=policy / row["plain"],
                never_slower=bool(policy <= row["plain"]),
            )
        )
    return pd.DataFrame(rows)


def _records(rows: pd.DataFrame) -> list[dict]:
    return json.loads(rows.to_json(orient="records"))


def draft_policy_run(
    out: str | Path,
    repeats: int = 2,
    progress: bool = True,
    engines=None,
    tokenizer=None,
    *,
    command: str,
) -> dict:
    """The whole protocol: development runs, the chosen caps, test runs, verdicts; written
    with its provenance (commit, the load of other processes) and the ``command`` that ran it
    to the JSON file ``out``."""
    from cadlib.decoding.engines import load_engine
    from cadlib.models import SMOLLM2, load_tokenizer

    monitor()
    if engines is None:
        engines = [
            load_engine(SMOLLM2, "transformers", device="cpu", threads=2),
            *(
                load_engine(SMOLLM2, "llama.cpp", threads=2, gguf_type=t)
                for t in PROTOCOL["gguf_types"]
            ),
        ]
    tokenizer = tokenizer or load_tokenizer(SMOLLM2)
    dev = time_arms(engines, tokenizer, sample(DEV, tokenizer), CAPS, repeats, progress=progress)
    chosen = choose_caps(dev)
    test_caps = sorted({None, *chosen.values()}, key=_length)
    test = time_arms(
        engines, tokenizer, sample(TEST, tokenizer), test_caps, repeats, progress=progress
    )
    report = run_report(
        "drafts",
        command,
        protocol=PROTOCOL,
        repeats=repeats,
        chosen=chosen,
        engines=[e.info() for e in engines],
        dev=_records(dev),
        test=_records(test),
        verdicts=_records(verdicts(test, chosen)),
    )
    return write_run_report(report, out)


def committed() -> dict | None:
    """The committed run (``results/llama_cpp.drafts.json``), or ``None``."""
    return read_results_file(COMMITTED)


def case_ratios(report: dict) -> pd.DataFrame:
    """Per engine and held-out case: the drafted decoder's decode time at the engine's chosen
    cap over the plain one's (each the median over repeats), so that a corpus's pooled verdict
    is not carried by its longest case."""
    test = pd.DataFrame(report["test"])
    per = test.groupby(["engine", "corpus", "case", "arm"]).decode_s.median().unstack("arm")
    policy = [per.loc[key, arm_label(report["chosen"][key[0]])] for key in per.index]
    return per.assign(policy_over_plain=policy / per["plain"])["policy_over_plain"].reset_index()
