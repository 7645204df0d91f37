"""Issue 51's selection-rule curves (cadlib.chapters.kv_reuse.run_rules): agreement read on the
cases that reuse anything, the recompute and decision costs, and the declared choice."""

import pandas as pd
import pytest

from cadlib.chapters.kv_reuse import run_rules as R
from cadlib.chapters.kv_reuse.profiles import RULE_DEV, RULES


def case_rows(corpus, case, policy, agree, splice, reused, check_ids=0):
    """Columns of one case: one decision row per entry of ``agree``."""
    n = len(agree)
    return dict(
        corpus=[corpus] * n,
        case=[case] * n,
        policy=[policy] * n,
        step=list(range(n)),
        agree=list(agree),
        kl=[0.0] * n,
        splice=[splice] * n,
        reused=[reused] * n,
        check_ids=[check_ids] * n,
    )


def merge(*parts) -> dict:
    return {k: [v for p in parts for v in p[k]] for k in parts[0]}


def test_agreement_is_read_on_reusing_cases_and_costs_are_shares():
    cols = merge(
        case_rows("heval-fix-py", "a", "deviation=0.3", [True, False, True, True], 10, 5, 12),
        case_rows("heval-fix-py", "b", "deviation=0.3", [True] * 96, 10, 0, 12),  # reuses none
        case_rows("heval-fix-py", "a", "seams=4", [True] * 4, 10, 8),
    )
    t = R.curve_table(cols, layers=30).set_index("policy")
    d = t.loc["deviation=0.3"]
    assert d.cases == 1 and d.idle == 1 and d.flipped == 1 and d.flip_rate == 1.0
    assert d.rate == pytest.approx(3 / 4)  # not (3 + 96) / 100: the idle case never counts
    assert d.recomputed == pytest.approx(1 - 5 / 20)
    assert d.check == pytest.approx(24 / 30 / 20)  # check ids x 1 layer / 30, per copied id
    assert d.family == "deviation"
    s = t.loc["seams=4"]
    assert s.rate == 1.0 and s.check == 0 and s.recomputed == pytest.approx(0.2)


def table(rates: dict) -> pd.DataFrame:
    """A curve table: ``{policy: (rate, recomputed)}``, each with a reusing case."""
    rows = [dict(policy=p, rate=r, recomputed=c, cases=1) for p, (r, c) in rates.items()]
    return pd.DataFrame(rows)


def test_the_least_recompute_at_the_threshold_wins():
    t = table({"none": (0.999, 0.1), "seams=4": (0.996, 0.4), "deviation=0.3": (0.999, 0.5)})
    assert R.choose_rule(t) == dict(policy="seams=4", met=True, rate=0.996, recomputed=0.4)


def test_below_the_threshold_the_best_within_30_percent_wins_and_may_be_none():
    t = table(
        {
            "seams=4": (0.98, 0.25),
            "deviation=0.15": (0.985, 0.28),
            "deviation=0.5": (0.99, 0.6),  # agrees more, costs too much
        }
    )
    got = R.choose_rule(t)
    assert got["policy"] == "deviation=0.15" and not got["met"]
    assert R.choose_rule(table({"deviation=0.5": (0.99, 0.6)})) == dict(policy=None, met=False)


def test_every_rule_has_a_family_and_the_development_corpora_are_not_test_data():
    for name, settings in RULES.items():
        assert all(R.family(p) == name for p in settings)
    with pytest.raises(KeyError):
        R.family("first=8,last=64")
    from cadlib.corpora import REALEDITS_TEST

    assert set(R.CASES) == set(RULE_DEV) and not set(RULE_DEV) & set(REALEDITS_TEST)
    assert not {c for c in RULE_DEV if c.startswith("heval-fix-")} - {
        "heval-fix-py",
        "heval-fix-js",
    }


def test_cases_run_round_robin_so_a_cut_run_covers_every_corpus():
    assert R.interleave([[1, 2, 3], ["a"], [10, 20]]) == [1, "a", 10, 2, 20, 3]
    assert R.interleave([]) == []


def report(rates: dict, complete: bool = True) -> dict:
    """A rules run: ``{policy: (agreeing decisions of 100, reused of 100 copied ids)}`` on one
    reusing case, its choice made by the declared rule."""
    from cadlib.chapters.kv_reuse.profiles import AGREEMENT_THRESHOLD, RULE_MAX_RECOMPUTE

    cols = merge(
        *(
            case_rows("heval-fix-py", "a", p, [True] * k + [False] * (100 - k), 100, reused)
            for p, (k, reused) in rates.items()
        )
    )
    return dict(
        protocol=dict(
            model="smollm2-135m-instruct",
            threshold=AGREEMENT_THRESHOLD,
            max_recompute=RULE_MAX_RECOMPUTE,
        ),
        hardware=dict(cpu="a CPU", cores=2),
        layers=30,
        complete=complete,
        chosen=R.choose_rule(R.curve_table(cols, 30)),
        rows=cols,
    )


def test_the_sentence_says_met_only_when_a_rule_reaches_the_threshold():
    from cadlib.chapters.kv_reuse.text_rules import rules_markdown

    met = rules_markdown(report({"none": (90, 90), "seams=4": (100, 80)}))
    assert "`seams=4`: it **meets**" in met and "1 development cases" in met
    assert "cut short" not in met
    missed = rules_markdown(report({"none": (90, 90), "seams=4": (99, 75)}, complete=False))
    assert "No setting **reaches**" in missed and "`seams=4`, 99.00% at 25%" in missed
    assert "cut short" in missed
    costly = rules_markdown(report({"none": (90, 90), "deviation=0.5": (99, 40)}))
    assert "none of the rules stays within it" in costly and "No setting reuses" in costly


def test_the_committed_choice_is_the_declared_rule_on_its_own_rows():
    from cadlib.chapters.kv_reuse.profiles import RULE_CHOSEN

    r = R.committed_rules()
    if r is None:
        pytest.skip("no rules run committed")
    assert r["chosen"] == R.choose_rule(R.curve_table(r["rows"], r["layers"]))
    assert r["chosen"]["policy"] == RULE_CHOSEN


def test_a_gated_rule_pays_for_its_fallbacks_in_what_the_choice_weighs():
    from cadlib.chapters.kv_reuse.profiles import GATED, RULE_CHOSEN

    (gated,) = GATED.values()
    assert all(R.family(p) == "gated" and p.startswith(f"{RULE_CHOSEN},margin=") for p in gated)
    cheap = case_rows("heval-fix-py", "a", RULE_CHOSEN, [True] * 99 + [False], 100, 80)
    fed = dict(case_rows("heval-fix-py", "a", gated[0], [True] * 100, 100, 80), fallbacks=[2] * 100)
    cols = merge(
        dict(cheap, fallbacks=[0] * 100, fallback_ids=[0] * 100),
        dict(fed, fallback_ids=[150] * 100),
    )
    t = R.curve_table(cols, layers=30).set_index("policy")
    assert t.loc[gated[0], "fallback"] == pytest.approx(1.5) and t.loc[RULE_CHOSEN, "fallback"] == 0
    assert t.loc[gated[0], "spent"] == pytest.approx(0.2 + 1.5)
    assert t.loc[gated[0], "rate"] == 1.0
    # it agrees, but feeds 1.5 ids again per copied id: over the 30 % budget if none agreed
    below = R.choose_rule(t.reset_index(), threshold=1.01)
    assert below["policy"] == RULE_CHOSEN and not below["met"]
    assert R.choose_rule(t.reset_index())["policy"] == gated[0]
    assert R.curve_table(merge(cheap), layers=30).fallback.tolist() == [0.0]


def test_the_committed_gated_run_chose_by_the_declared_rule_among_the_declared_settings():
    from cadlib.chapters.kv_reuse.profiles import GATED
    from cadlib.record.results import read_results_file

    r = read_results_file(R.GATED_RESULTS)
    if r is None:
        pytest.skip("no gated run committed")
    assert r["protocol"]["rules"]["gated"] == list(GATED["gated"])
    assert r["chosen"] == R.choose_rule(R.curve_table(r["rows"], r["layers"]))


def test_the_gated_sentence_weighs_the_fallbacks_against_the_budget():
    from cadlib.chapters.kv_reuse.profiles import GATED, RULE_CHOSEN
    from cadlib.chapters.kv_reuse.text_rules import gated_markdown

    (gated,) = GATED.values()
    r = report({"none": (90, 90), RULE_CHOSEN: (95, 80), gated[0]: (100, 80)})
    fed = [50 if p == gated[0] else 0 for p in r["rows"]["policy"]]
    r["rows"].update(fallback_ids=fed, fallbacks=[int(n > 0) for n in fed])
    r["chosen"] = R.choose_rule(R.curve_table(r["rows"], 30))
    text = gated_markdown(r)
    assert f"`{gated[0]}`, **meets**" in text and "spends 70% of the copied ids" in text
    assert "**over** the 30% budget" in text and "`margin=0.5` 100.00% spending 70%" in text
