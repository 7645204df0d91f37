"""The per-engine draft cap (cadlib.costs.draft_policy, run by chapter 6b's command
``python -m cadlib.chapters.llama_cpp.commands drafts``): the rule that picks it, the held-out
verdict, the timed arms on a model, the engines' caps being the committed run's choice, and the
chapter's verdict sentence (cadlib.chapters.llama_cpp.text.policy_markdown)."""

import pandas as pd
import pytest

from cadlib.chapters import llama_cpp as L
from cadlib.corpora import EditCase
from cadlib.costs import draft_policy as DP
from cadlib.decoding.engines import as_engine
from cadlib.decoding.methods import prepare

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def rows(times: dict, engine="e", corpus="c") -> pd.DataFrame:
    """Two repeats of one case per arm, at the given seconds."""
    return pd.DataFrame(
        [
            dict(
                engine=engine,
                corpus=corpus,
                case="c/0",
                arm=arm,
                repeat=r,
                decode_s=s,
                forwards=1,
                draft_ids=0,
                draft_accepted=0,
            )
            for arm, s in times.items()
            for r in (0, 1)
        ]
    )


def test_the_longest_cap_within_the_tie_wins():
    dev = rows({"plain": 9.0, "drafts": 5.1, "drafts<=32": 5.0, "drafts<=16": 6.0})
    assert DP.choose_caps(dev, caps=(None, 32, 16), tie=0.03) == {"e": None}
    assert DP.choose_caps(dev, caps=(None, 32, 16), tie=0.01) == {"e": 32}
    slow_uncapped = rows({"plain": 9.0, "drafts": 8.0, "drafts<=32": 7.0, "drafts<=16": 5.0})
    assert DP.choose_caps(slow_uncapped, caps=(None, 32, 16)) == {"e": 16}


def test_the_verdict_fails_where_the_drafts_are_slower():
    test = pd.concat(
        [
            rows({"plain": 2.0, "drafts": 1.0}, corpus="a"),
            rows({"plain": 2.0, "drafts": 2.5}, corpus="b"),
        ]
    )
    v = DP.verdicts(test, {"e": None}).set_index("corpus")
    assert v.loc["a", "never_slower"] and not v.loc["b", "never_slower"]
    assert v.loc["b", "policy_over_plain"] == pytest.approx(1.25)


def test_every_arm_decodes_the_gold_and_a_cap_bounds_its_drafts(model, tok):
    doc = "\n".join(f"v{i}" for i in range(1, 31))
    cases = [
        prepare("toy", EditCase("toy/0", doc, doc.replace("v27\n", "w27\n"), "w27."), tok),
        prepare("toy", EditCase("toy/1", doc, doc.replace("v3\n", "w3\n"), "w3."), tok),
    ]
    got = DP.time_arms(
        [as_engine(model)], tok, cases, caps=(None, 4), repeats=1, warmup=0, progress=False
    )
    assert sorted(set(got.arm)) == ["drafts", "drafts<=4", "plain"] and len(got) == 6
    per_arm = got.groupby("arm")[["forwards", "draft_ids"]].sum()
    assert per_arm.loc["plain", "draft_ids"] == 0
    # every forward (the prompt's prefill too: ``forwards`` counts those after it) feeds <= 4
    assert per_arm.loc["drafts<=4", "draft_ids"] <= 4 * (per_arm.loc["drafts<=4", "forwards"] + 2)
    assert per_arm.loc["drafts", "forwards"] < per_arm.loc["plain", "forwards"]


def test_the_engines_caps_are_the_committed_runs_choice():
    from cadlib.decoding.engines import LlamaCppEngine, TransformersEngine
    from cadlib.decoding.engines.llamacpp import DRAFT_MAX_IDS

    report = DP.committed()
    assert report is not None, f"results/{DP.COMMITTED} is not committed"
    chosen = report["chosen"]
    assert TransformersEngine.draft_max_ids == chosen["transformers"]
    assert {k: v for k, v in DRAFT_MAX_IDS.items()} == {
        k: v for k, v in chosen.items() if k.startswith(LlamaCppEngine.name)
    }
    assert report["protocol"]["caps"] == list(DP.CAPS)


def test_a_case_slower_with_drafts_is_named_even_when_its_corpus_pools_faster():
    test = pd.concat(
        [
            rows({"plain": 10.0, "drafts": 5.0}, corpus="a"),
            rows({"plain": 1.0, "drafts": 1.2}, corpus="a").assign(case="c/1"),
        ]
    )
    report = dict(
        test=DP._records(test),
        chosen={"e": None},
        repeats=2,
        verdicts=DP._records(DP.verdicts(test, {"e": None})),
        protocol=dict(model="m", threads=2),
        hardware=dict(cpu="A", cores=2),
        provenance={
            "load": {
                "other_cores": {"mean": 0.0, "max": 0.0},
                "samples": 1,
                "load_avg_1m": {"mean": 0, "max": 0},
            },
            "busy": False,
        },
    )
    ratios = DP.case_ratios(report).set_index("case").policy_over_plain
    assert ratios["c/0"] == pytest.approx(0.5) and ratios["c/1"] == pytest.approx(1.2)
    text = L.text.policy_markdown(report)
    assert "took no more pooled decode time" in text
    assert "slower in 1 of 2 (engine, case) pairs: c/1 on e, 1.20×" in text


def test_the_chapter_command_runs_the_protocol_and_records_itself(monkeypatch, capsys):
    from cadlib.chapters.llama_cpp import commands

    calls = []

    def run(out, repeats, *, command):
        calls.append((out, repeats, command))
        return {"chosen": {"e": None}}

    monkeypatch.setattr(DP, "draft_policy_run", run)
    assert commands.main(["drafts", "--out", "x.json", "--repeats", "3"]) == 0
    assert calls == [("x.json", 3, "python -m cadlib.chapters.llama_cpp.commands drafts")]
    assert "wrote x.json" in capsys.readouterr().out
