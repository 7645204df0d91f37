"""The dev-chosen policy on fresh, long RealEdits-Flask edits
(cadlib.chapters.kv_reuse.run_flask_sample and text_flask_sample): which cases it takes, and
what its sentences say."""

from types import SimpleNamespace

from test_kv_reuse_every_case import run

from cadlib.chapters.kv_reuse import run_flask_sample as F
from cadlib.chapters.kv_reuse import text_flask_sample as FT
from cadlib.corpora import case_rank


def fake_inputs(n_prompt: dict):
    """``sample_cases`` over fake Flask cases ``{id: prompt ids}`` (targets of 100 ids): the
    first ``n`` in seeded order among prompts within the cap, as the chapter's does."""

    def sample_cases(names, n, tokenizer, max_prompt=None, seed=0):
        xs = [
            SimpleNamespace(case=SimpleNamespace(id=i), edit_prompt=[0] * p, target=[0] * 100)
            for i, p in n_prompt.items()
            if max_prompt is None or p <= max_prompt
        ]
        ranked = sorted(xs, key=lambda x: case_rank(seed, x.case.id))
        return {names[0]: ranked if n is None else ranked[:n]}

    return sample_cases


def test_the_sample_skips_used_cases_and_those_beyond_the_context(monkeypatch):
    prompts = {f"c{k}": (500 if k % 3 == 0 else 3000) for k in range(60)}
    prompts["huge"] = F.CONTEXT  # with its 100 target ids, beyond the context
    monkeypatch.setattr(F, "sample_cases", fake_inputs(prompts))
    used = F.used_cases(None)
    assert len(used) == 13 and all(prompts[i] <= 1000 for i in used)
    xs = F.sample_inputs(None, cases=30)[F.CORPUS]
    ids = [x.case.id for x in xs]
    assert len(ids) == 30 and not set(ids) & used and "huge" not in ids
    assert ids == sorted(ids, key=lambda i: case_rank(F.SEED, i))  # the seeded order


def flask_run(agree_chosen, prompts=(1200, 2800, 4700)):
    r = run("realedits-flask", {"none": [True, False], "last=16": agree_chosen})
    r["prompt_ids"] = list(prompts)
    return r


def test_the_sentence_gives_prompt_lengths_agreement_and_the_verdict():
    text = FT.sample_markdown(flask_run([True, True]))
    assert text.startswith(
        "On 1 fresh RealEdits-Flask cases (real commits; prompts of "
        "1,200–4,700 ids, median 2,800: all longer than the 1,000-id cap"
    )
    assert "`last=16` recomputes 50% of the copied ids and reuses prompt entries in 1 of 1" in text
    assert "agrees with the exact splice on 100.00% of 2 decisions" in text
    assert (
        "it meets the 99.5% threshold." in text
        and "`none` (recomputing 50%) agrees on 50.0%" in text
    )
    assert "Setting: m with its own tokenizer" in text and "agree by construction" not in text
    assert FT.answer_sentence(flask_run([True, False])) == (
        "On 1 fresh Flask edits (prompts of median 2,800 ids) it agrees on 50.00% where it "
        "reuses prompt entries (1 cases, 1 with a flipped decision): short of the threshold."
    )
    text = FT.sample_markdown(flask_run([True, True], prompts=(900, 2000)))
    assert "median 1,450" in text and "all longer" not in text  # the mean of the middle two


def test_the_committed_sample_is_the_declared_one():
    from cadlib.chapters.kv_reuse import run_policy_search as policy_search

    sample = F.committed_sample()
    assert sample["chosen"] == policy_search.committed()["chosen"]
    assert sample["protocol"]["cases"] == F.CASES == len(set(sample["test"]["case"]))
    assert set(sample["test"]["policy"]) == {"none", sample["chosen"]}
    assert len(sample["prompt_ids"]) == F.CASES
