"""The dev-chosen recompute policy (cadlib.chapters.kv_reuse.run_policy_search and
text_policy_search): the rule that picks it, the held-out sample it is judged on, the generated
sentence's verdict, and the committed run's choice being the rule's on its own development
rows."""

import pandas as pd
import pytest

from cadlib.chapters.kv_reuse import run_policy_search as S
from cadlib.chapters.kv_reuse import text_policy_search as ST
from cadlib.chapters.kv_reuse.profiles import AGREEMENT_THRESHOLD
from cadlib.chapters.kv_reuse.run import agreement_inputs, agreement_table
from cadlib.models import SMOLLM2, load_tokenizer


def table(rates: dict) -> pd.DataFrame:
    """An agreement table: ``{policy: (rate, recomputed)}``."""
    return pd.DataFrame([dict(policy=p, rate=r, recomputed=c) for p, (r, c) in rates.items()])


def test_the_least_recomputing_policy_that_meets_the_threshold_wins():
    t = table(
        {
            "none": (0.95, 0.1),
            "last=32": (0.996, 0.5),
            "first=8,last=64": (0.999, 0.9),
            "all": (1.0, 1.0),
        }
    )
    assert S.choose(t) == "last=32"


def test_without_a_policy_at_the_threshold_the_best_agreement_wins_never_the_control():
    t = table(
        {
            "none": (0.95, 0.1),
            "last=32": (0.97, 0.5),
            "first=4,last=32": (0.97, 0.6),
            "all": (1.0, 1.0),
        }
    )
    assert S.choose(t) == "last=32"  # tied on agreement: the one that recomputes less


def columns(policy: str, agree: list[bool], corpus: str) -> dict:
    n = len(agree)
    return dict(
        corpus=[corpus] * n,
        case=[f"{corpus}/0"] * n,
        policy=[policy] * n,
        step=list(range(n)),
        kind=["gen"] * n,
        since_copy=[None, *range(n - 1)],
        agree=agree,
        kl=[0.0] * n,
        splice=[10] * n,
        reused=[5] * n,
    )


def report(test_agree: list[bool]) -> dict:
    dev = columns("none", [True] * 4, "heval-fix-py")
    test = columns("none", test_agree, "heval-fix-go")
    return dict(
        protocol=S.PROTOCOL,
        chosen="none",
        dev=dev,
        test=test,
        hardware=dict(cpu="cpu", cores=2),
        provenance=None,
    )


def test_the_sentence_says_whether_the_held_out_agreement_meets_the_threshold():
    assert "does not meet" in ST.search_markdown(report([True, False, True]))
    met = ST.search_markdown(report([True] * 3))
    assert "does not meet" not in met and "it meets the 99.5% threshold." in met
    assert ST.answer_sentence(report([True, False])).endswith("short of the threshold.")
    assert ST.answer_sentence(report([True] * 3)).endswith("it meets the threshold.")
    t = S.search_table(report([True, False]))
    assert list(t.split) == ["dev", "test"] and t.chosen.all()
    assert t.set_index("split").rate["test"] == pytest.approx(0.5)


def test_cases_that_reuse_nothing_are_counted_apart_and_never_carry_a_pass():
    """Pooled with the case that reuses nothing, 4 of 5 decisions agree; where the policy
    reuses prompt entries, 1 of 2: the verdict reads the latter."""
    r = report([True, False])
    idle = columns("none", [True] * 3, "heval-fix-cpp")
    idle["reused"] = [0] * 3
    r["test"] = {k: v + idle[k] for k, v in r["test"].items()}
    v = S.judged(r)
    assert v["pooled"].idle == 1 and v["pooled"].cases == 1 and v["pooled"].flipped == 1
    assert v["pooled"].rate == pytest.approx(0.5) and not v["meets"]
    text = ST.search_markdown(r)
    assert "reuses prompt entries in 1 of 2 cases" in text and "on 50.00% of 2" in text
    assert "The other 1 recompute every copied id and agree by construction." in text
    assert "(below it in HEvalFix-Go)" in text  # C++ reused nothing: untested, not below
    assert "reuses prompt entries in 1 of 2 fresh held-out cases and agrees there on 50.00%" in (
        ST.answer_sentence(r)
    )


def test_the_held_out_sample_follows_the_agreement_runs_cases(monkeypatch):
    tok = load_tokenizer(SMOLLM2)
    monkeypatch.setattr(S, "TEST_CASES", {"heval-fix-go": (5, 3, 1000)})
    fresh = [x.case.id for x in S.test_inputs(tok)["heval-fix-go"]]
    seen = agreement_inputs(dict(agreement_cases={"heval-fix-go": 5}, max_prompt=1000), tok)
    assert len(fresh) == 3 and not set(fresh) & {x.case.id for x in seen["heval-fix-go"]}
    both = agreement_inputs(dict(agreement_cases={"heval-fix-go": 8}, max_prompt=1000), tok)
    assert {x.case.id for x in both["heval-fix-go"]} >= set(fresh)  # the next in the order


def test_the_committed_choice_is_the_rules_on_its_development_rows():
    run = S.committed()
    assert run is not None, "results/kv_reuse.policy.json: the run chapter 6c shows"
    dev = agreement_table(S._frame(run["dev"]), by=("policy",))
    assert S.choose(dev, run["protocol"]["threshold"]) == run["chosen"]
    assert run["protocol"]["threshold"] == AGREEMENT_THRESHOLD
    assert set(dev.policy) == set(run["protocol"]["grid"])
    held_out = set(S._frame(run["test"]).split)
    assert held_out == {"test"}
