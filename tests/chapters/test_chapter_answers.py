"""Each chapter opens with its question and a generated answer (issue 33): the ``answer``
functions of the chapter modules, read on the committed results files (the cpu run and the
evidence run where there is one), state the run's own numbers, and their outcome words follow
the numbers."""

from __future__ import annotations

import copy
import json

import pytest

import cadlib.chapters.decoding as decoding
import cadlib.chapters.llama_cpp as LC
from cadlib.chapters import ceiling, formats, kernel, losslessness, sft_pilot
from cadlib.chapters import fim_constraint as fim
from cadlib.chapters import kv_reuse as KV
from cadlib.chapters.perturbation import text as perturbation
from cadlib.fim.completion import ENDS
from cadlib.paths import repo_root


def numbers(name: str) -> dict:
    path = repo_root() / "results" / f"{name}.json"
    if not path.exists():
        pytest.skip(f"results/{name}.json is not committed")
    return json.loads(path.read_text())["numbers"]


def sentences(text: str) -> int:
    return text.count(". ") + text.endswith(".")


def test_losslessness_answer_counts_every_case_and_flips_on_a_failure():
    n = numbers("losslessness")
    text = losslessness.text.answer(n)
    assert text.startswith("**Yes.**") and f"{n['escape_fuzz']['n']:,}" in text
    broken = copy.deepcopy(n)
    broken["round_trip"]["probeedit"]["byte-exact"] -= 1
    assert losslessness.text.answer(broken).startswith("**No.**")


def test_kernel_answer_states_the_primary_curve_and_the_splice_check():
    n = numbers("kernel")
    c = n["curves"][n["primary"]]
    text = kernel.text.answer(n, "CPU, profile cpu")
    assert n["primary"] in text and f"{c['s'][-1]:.1f}×" in text and "exactly" in text
    failed = copy.deepcopy(n)
    failed["splice_check"]["passed"] = False
    assert "failed" in kernel.text.answer(failed, "CPU")


def test_ceiling_answer_gives_the_line_fraction_and_both_bounds():
    n = numbers("ceiling")
    text = ceiling.text.answer(n)
    assert f"{100 * n['line']['heval-fix-py']['f_line']:.1f}%" in text
    ref = n["bounds_paper_reference_curve"]["line"]["probeedit"]["bnd_exact"]
    assert f"{ref:.1f}×" in text and text.startswith("Most of it")


def test_formats_answer_compares_the_pooled_formats():
    n = numbers("formats")
    text = formats.text.answer(n)
    assert f"{n['table3']['pooled']['cad']['mean']:.1f}" in text
    assert "cheapest and always applied exactly" in text
    dearer = copy.deepcopy(n)
    dearer["table3"]["pooled"]["cad"]["mean"] = 1e6
    assert "not the cheapest" in formats.text.answer(dearer)


def test_perturbation_answer_follows_the_noise_levels():
    t8 = numbers("perturbation")["table8"]
    text = perturbation.answer(t8)
    assert f"{t8['pooled']['1']['em_trimmed']:.1%}" in text
    assert f"{t8['pooled']['5']['em_trimmed']:.1%}" in text


@pytest.mark.parametrize("name", ["decoding", "decoding.full"])
def test_decoding_answer_leads_with_the_median_case_and_says_where_it_loses(name):
    n = numbers(name)
    text = decoding.text.answer(n, "here")
    assert text.startswith("By the median case of each corpus")
    fix = [r for r in n["accounting"]["strata"] if r["corpus"].startswith("heval-fix-")]
    slower, cases = (sum(r[k] for r in fix) for k in ("slower_than_ar", "cases"))
    assert f"slower than autoregressive decoding on {slower} of {cases} HumanEvalFix cases" in text
    cad, pld = (n["speed"][f"pooled/{m}"] for m in ("Copy-as-Decode", "prompt lookup"))
    pooled = f"{cad['speedup']:.2f}× (prompt lookup {pld['speedup']:.2f}×) is a ratio of sums"
    assert text.index("Where it loses") < text.index(pooled)  # pooled after, with its carrier
    won = copy.deepcopy(n)
    for row in won["cost_model"]["predicted_speedups"]:
        if row["method"] == "Copy-as-Decode":
            row["median_speedup"] = 1e3
    k = len(n["accounting"]["strata"])
    assert f"beats prompt lookup on {k} of {k} corpora" in decoding.text.answer(won, "here")


def test_llama_cpp_answer_says_whether_the_splice_pays_on_llama_cpp():
    n = numbers("llama_cpp")
    text = LC.text.answer(n, "here")
    assert text.startswith(("Yes", "No")) and "ProbeEdit" in text and 2 <= sentences(text) <= 4
    for e in n["methods"]:
        if LC.run.is_llama(e):
            n["methods"][e]["probeedit"]["autoregressive"]["decode_s"] = 1e-6
    assert LC.text.answer(n, "here").startswith("No")


def test_kv_reuse_answer_reports_shares_agreement_and_the_verdict():
    n = numbers("kv_reuse")
    text = KV.text.answer(n)
    assert f"{n['verdict']['threshold']:.1%}" in text
    each = [c["none"]["reused"] / c["none"]["splice"] for c in n["shares"]["SmolLM2"].values()]
    assert f"{min(each):.1%}–{max(each):.1%} with SmolLM2" in text  # per corpus, not pooled
    assert text.startswith("No recompute policy meets")  # every held-out rate is below
    met = copy.deepcopy(n)
    met["agreement"]["test"]["first=2"]["rate"] = 0.999
    assert KV.text.answer(met).startswith("`first=2` meets the 99.5% agreement threshold")


def test_kv_reuse_answer_reads_agreement_where_the_policy_reuses_prompt_entries():
    """Recounted from the committed every-case runs: the cases where the chosen policy reuses
    any prompt entry, their agreement and those with a flipped decision; the cases that reuse
    nothing (agreement by construction) never carry the verdict, so the Answer says no policy
    meets the threshold, and would say one does on a constructed pass."""
    n = numbers("kv_reuse.agreement")
    every = KV.run_every_case.committed_runs()
    chosen = every[0]["chosen"]
    rows = [
        r
        for run in every
        for r in zip(*(run["test"][k] for k in ("case", "policy", "agree", "reused")), strict=True)
        if r[1] == chosen
    ]
    used = [r for r in rows if r[3] > 0]
    cases = {r[0] for r in used}
    flipped = {r[0] for r in used if not r[2]}
    rate = sum(r[2] for r in used) / len(used)
    text = KV.text.answer(n, every=every)
    assert (
        f"reuses prompt entries in {len(cases)} of {len({r[0] for r in rows})} cases and agrees "
        f"there on {rate:.2%}, {len(flipped)} of them with a flipped decision"
    ) in text
    assert rate < KV.profiles.AGREEMENT_THRESHOLD and text.startswith("No recompute policy meets")
    passing = copy.deepcopy(every)
    for run in passing:
        run["test"]["agree"] = [True] * len(run["test"]["agree"])
    assert KV.text.answer(n, every=passing).startswith(f"`{chosen}` meets the 99.5% agreement")
    flask = copy.deepcopy(KV.run_flask_sample.committed_sample())  # 96.40%: a failed check
    assert KV.text.answer(n, every=passing, flask=flask).startswith("No recompute policy meets")


@pytest.mark.parametrize("name", ["sft_pilot", "sft_pilot.full"])
def test_sft_answer_is_the_declared_test(name):
    n = numbers(name)
    profile = name.partition(".")[2] or "cpu"
    records = sft_pilot.run.read_cases(sft_pilot.run.committed_cases(profile))
    text = sft_pilot.text.answer(n, records)
    span = next(
        c
        for c in n["comparisons"]
        if c["metric"] == "span_em" and c["system_b"] == "FSM-constrained (untrained)"
    )
    # neither committed run selects spans on multi-line documents: the Answer leads with them
    assert text.startswith("**No** on multi-line documents")
    assert f"Pooled, the declared test gives {span['a']}/{span['n']}" in text


@pytest.mark.parametrize("name", ["fim", "fim.large"])
def test_fim_answer_gives_the_primary_metric_with_and_without_the_constraint(name):
    n = numbers(name)
    text = fim.text.answer(n, "here")
    base, cons = n["fim"]["unconstrained"], n["fim"]["FIM-constrained"]
    primary = fim.run.PRIMARY
    assert (
        f"{cons[primary]}/{cons['n']} FIM completions ({base[primary]}/{base['n']} without)" in text
    )
    assert f"parse in {cons['parses']}/{cons['n']}" in text
    # the primary metric leads; the recognizer's agreement follows it
    assert not text.startswith("**Yes**") and text.index("FIM") < text.index("recognizer agreed")


def _fim_arm(n: int, ended: int, closed: int) -> dict:
    end = dict(zip(ENDS, (ended, 0, closed, 0), strict=True))
    return {
        "n": n,
        fim.run.PRIMARY: ended,
        "parses": ended + closed,
        "budget_closed": closed,
        **end,
    }


def test_fim_answer_is_no_yes_when_agreement_is_exact_but_few_fill_ins_end():
    exact = {"edits": 100, "disagreements": 0}
    few = {
        "differential": exact,
        "fim": {"unconstrained": _fim_arm(50, 5, 40), "FIM-constrained": _fim_arm(50, 3, 47)},
        "localized_edit": {
            "M / unconstrained": _fim_arm(10, 2, 8),
            "M / FIM-constrained": _fim_arm(10, 1, 9),
        },
    }
    text = fim.text.answer(few, "toy")
    assert text.startswith("**Only the fill-ins the model ends**") and "Yes" not in text
    assert "3/50 FIM completions (5/50 without)" in text and "closed 47/50 and 9/10" in text
    every = copy.deepcopy(few)
    for arm in (every["fim"]["FIM-constrained"], every["localized_edit"]["M / FIM-constrained"]):
        arm.update(_fim_arm(arm["n"], arm["n"], 0))
    assert fim.text.answer(every, "toy").startswith("**Yes**")
    every["differential"] = {"edits": 100, "disagreements": 1}
    assert fim.text.answer(every, "toy").startswith("**No**")
