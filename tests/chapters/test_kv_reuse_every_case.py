"""The dev-chosen policy on every case of the held-out HumanEvalFix corpora
(cadlib.chapters.kv_reuse.run_every_case and text_every_case): the pooled sentence, its table,
and the command's refusal of a corpus it does not judge."""

import pytest

from cadlib.chapters.kv_reuse import commands
from cadlib.chapters.kv_reuse import run_every_case as E
from cadlib.chapters.kv_reuse import text_every_case as ET


def run(corpus: str, policy_agree: dict) -> dict:
    """One corpus's run: ``{policy: [agree, ...]}`` over one case."""
    cols = {
        k: []
        for k in (
            "corpus",
            "case",
            "policy",
            "step",
            "kind",
            "since_copy",
            "agree",
            "kl",
            "splice",
            "reused",
        )
    }
    for policy, agree in policy_agree.items():
        n = len(agree)
        for k, v in dict(
            corpus=[corpus] * n,
            case=[f"{corpus}/0"] * n,
            policy=[policy] * n,
            step=list(range(n)),
            kind=["gen"] * n,
            since_copy=[None] * n,
            agree=agree,
            kl=[0.0] * n,
            splice=[10] * n,
            reused=[5] * n,
        ).items():
            cols[k] += v
    return dict(
        chosen="last=16",
        test=cols,
        hardware=dict(cpu="cpu", cores=2),
        provenance=None,
        protocol=dict(corpus=corpus, threshold=0.995, model="m"),
    )


def test_the_sentence_pools_the_corpora_and_names_those_not_recorded():
    runs = [
        run("heval-fix-go", {"none": [True, False], "last=16": [True, True]}),
        run("heval-fix-java", {"none": [False, False], "last=16": [True, False]}),
    ]
    text = ET.every_markdown(runs)
    assert text.startswith(
        "On every case of HEvalFix-Go, HEvalFix-Java (one family: 1 task in 2 languages), "
        "`last=16` recomputes 50% of the copied ids and reuses prompt entries in 2 of 2 cases."
    )
    assert "agrees with the exact splice on 75.00% of 4 decisions" in text
    assert "per language 50.00%–100.00%), and 1 of the 2 cases have a flipped decision" in text
    assert "**does not meet** the 99.5% threshold (below it in HEvalFix-Java)." in text
    assert "`none` (recomputing 50%) agrees on 25.0%" in text
    assert "Not yet recorded: HEvalFix-C++, HEvalFix-Rust." in text
    assert "Setting: m with its own tokenizer" in text and "no paper figure" in text
    assert ET.answer_sentence(runs) == (
        "On every case of 2 held-out HumanEvalFix languages (1 task), it reuses prompt entries "
        "in 2 of 2 cases and agrees there on 75.00%, 1 of them with a flipped decision: it "
        "**does not meet** the 99.5% threshold (below it in HEvalFix-Java)."
    )
    t = E.every_table(runs).set_index(["corpus", "policy"])
    assert t.loc[("all", "last=16"), "decisions"] == 4
    assert t.loc[("all", "last=16"), "flipped"] == 1
    assert t.loc[("HEvalFix-Java", "none"), "rate"] == 0
    assert "all" not in set(E.every_table(runs, pooled=False).corpus)


def test_the_command_refuses_a_corpus_it_does_not_judge():
    with pytest.raises(SystemExit):
        commands.main(["every-case", "probeedit"])
    with pytest.raises(SystemExit):
        commands.main(["every-case", "realedits-flask"])


def test_one_command_names_the_chapters_three_runs():
    """``python -m cadlib.chapters.kv_reuse.commands`` parses each run's arguments (nothing
    runs here), writing under ``_build/`` unless told where."""
    parse = commands.parser().parse_args
    assert parse(["policy-search"]).out == "_build/kv_reuse.policy.json"
    every = parse(["every-case", "heval-fix-go", "--out", "x.json"])
    assert (every.corpus, every.out, every.func) == ("heval-fix-go", "x.json", commands.every_case)
    assert parse(["flask-sample"]).func is commands.flask_sample
    assert E.COMMAND == f"{commands.PROG} every-case"


def test_an_untimed_run_closes_with_a_setting_caption_and_no_load():
    """The load bears on timings only: an untimed run's paragraph ends with its setting as a
    caption of its own line (italics), and says nothing of the load."""
    runs = [
        run("heval-fix-go", {"none": [True], "last=16": [True]}),
        run("heval-fix-rust", {"none": [True], "last=16": [True]}),
    ]
    for r, mean, busy in zip(runs, (0.2, 0.9), (False, True), strict=True):
        r["provenance"] = dict(load=dict(other_cores=dict(mean=mean)), busy=busy)
    text = ET.every_markdown(runs)
    caption = text.split("\n\n")[-1]
    assert caption.startswith("*Nothing here is timed. Setting: m with its own tokenizer")
    assert caption.endswith("*") and caption.count("*") == 2
    assert "core busy" not in text


def idle_pair(last16_go: list[bool]) -> list[dict]:
    """Go's case reuses prompt entries under ``last=16``; Java's reuses none (every id
    recomputed: agreement by construction); threshold 85%."""
    go = run("heval-fix-go", {"none": [True] * 4, "last=16": last16_go})
    java = run("heval-fix-java", {"none": [True] * 4, "last=16": [True] * 4})
    java["test"]["reused"] = [5] * 4 + [0] * 4
    for r in (go, java):
        r["protocol"]["threshold"] = 0.85
    return [go, java]


def test_cases_that_reuse_nothing_never_carry_a_pass():
    """Pooled with the case that reuses nothing, 7 of 8 decisions agree (87.5% >= 85%); where
    ``last=16`` reuses prompt entries, 3 of 4 (75%): it does not meet the threshold."""
    runs = idle_pair([True, True, True, False])
    text = ET.every_markdown(runs)
    assert "reuses prompt entries in 1 of 2 cases" in text
    assert "on 75.00% of 4 decisions" in text and "**does not meet** the 85.0% threshold" in text
    assert "The other 1 recompute every copied id and agree by construction." in text
    assert ET.answer_sentence(runs).endswith(
        "**does not meet** the 85.0% threshold (below it in HEvalFix-Go)."
    )
    assert E.accepted_policy(runs) is None


def test_the_sentence_can_say_a_policy_meets_the_threshold():
    runs = idle_pair([True] * 4)
    text = ET.every_markdown(runs)
    assert "it meets the 85.0% threshold." in text and "does not meet" not in text
    assert ET.answer_sentence(runs).endswith(
        "0 of them with a flipped decision: it meets the 85.0% threshold."
    )  # not "in every language": Java's case reused nothing, so Java is untested
    both = [run(c, {"none": [True], "last=16": [True]}) for c in ("heval-fix-go", "heval-fix-java")]
    assert "it meets the 99.5% threshold in every language." in ET.every_markdown(both)


def test_the_committed_runs_judge_the_searchs_choice_on_whole_corpora():
    from cadlib.chapters.kv_reuse import run_policy_search as policy_search

    runs = E.committed_runs()
    assert [r["protocol"]["corpus"] for r in runs] == list(E.CORPORA)
    chosen = policy_search.committed()["chosen"]
    for r in runs:
        assert r["chosen"] == chosen and set(r["test"]["policy"]) == {"none", chosen}
        assert len(set(r["test"]["case"])) == 164  # every HumanEvalFix case of the corpus


def test_the_accepted_policy_needs_every_corpus_and_a_pass_where_it_reuses():
    def all_corpora(agree_chosen):
        return [run(c, {"none": [False], "last=16": [agree_chosen]}) for c in E.CORPORA]

    assert E.accepted_policy(all_corpora(True)) == "last=16"
    assert E.accepted_policy(all_corpora(False)) is None  # pooled 0% < 99.5%
    assert E.accepted_policy(all_corpora(True)[:3]) is None  # one corpus not recorded
    assert E.accepted_policy([]) is None
