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
def test_decoding_answer_ranks_copy_as_decode_against_prompt_lookup(name):
    n = numbers(name)
    text = decoding.text.answer(n, "here")
    cad, pld = (n["speed"][f"pooled/{m}"] for m in ("Copy-as-Decode", "prompt lookup"))
    assert f"{cad['speedup']:.2f}×" in text and f"{pld['speedup']:.2f}×" in text
    slow = copy.deepcopy(n)
    for key, row in slow["speed"].items():
        if key.startswith("pooled/Copy-as-Decode"):
            row["speedup"] = 0.5
    assert "slower than prompt lookup" in decoding.text.answer(slow, "here")


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
    text = sft_pilot.text.answer(n)
    span = next(
        c
        for c in n["comparisons"]
        if c["metric"] == "span_em" and c["system_b"] == "FSM-constrained (untrained)"
    )
    learned = span["significant"] and span["a"] > span["b"]
    assert text.startswith("**Yes**" if learned else "**No**")
    assert f"{span['a']}/{span['n']}" in text


@pytest.mark.parametrize("name", ["fim", "fim.large"])
def test_fim_answer_gives_the_primary_metric_with_and_without_the_constraint(name):
    n = numbers(name)
    text = fim.text.answer(n, "here")
    base, cons = n["fim"]["unconstrained"], n["fim"]["FIM-constrained"]
    primary = fim.run.PRIMARY
    assert f"from {base[primary]}/{base['n']} to {cons[primary]}/{cons['n']}" in text
    assert text.startswith("Yes")
