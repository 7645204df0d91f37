"""The SFT pilot (paper §5, Tables 6, 7): split, training data, metrics, a training smoke test."""

import math

import pytest

from cadlib import metrics
from cadlib.chapters import sft_pilot as sft
from cadlib.corpora import EditCase, make_split
from cadlib.grammar import Copy, Gen, Program
from cadlib.oracle import oracle_program

# --------------------------------------------------------------------------------------------
# The split
# --------------------------------------------------------------------------------------------


def fake_corpus(prefix, n):
    return [EditCase(f"{prefix}/{k}", "a\nb", "a\nc", "fix") for k in range(n)]


def test_split_sizes_follow_the_paper():
    corpora = {
        "heval-fix-py": fake_corpus("Python", 164),
        "heval-fix-js": fake_corpus("JavaScript", 164),
        "probeedit": fake_corpus("probeedit/doc/op", 154),
    }
    split = make_split(corpora, seed=0)
    sizes = {n: (e["n_train"], e["n_held_out"]) for n, e in split["corpora"].items()}
    assert sizes == {"heval-fix-py": (131, 33), "heval-fix-js": (131, 33), "probeedit": (123, 31)}
    assert len(sft.run_examples.training_cases(split, "py", corpora)) == 131
    assert (
        len(sft.run_examples.training_cases(split, "combined", corpora)) == 385
    )  # the paper's Combined


def test_training_cases_refuse_a_leak():
    corpora = {"heval-fix-py": fake_corpus("Python", 10)}
    split = make_split(corpora, seed=0)
    entry = split["corpora"]["heval-fix-py"]
    entry["train"].append(entry["held_out"][0])
    entry["n"] += 1  # pretend the corpus had it twice
    corpora["heval-fix-py"] = corpora["heval-fix-py"] + [corpora["heval-fix-py"][0]]
    with pytest.raises((AssertionError, ValueError)):
        sft.run_examples.training_cases(split, "py", corpora)


def test_unknown_names_fail_loudly():
    with pytest.raises(ValueError, match="train set"):
        sft.run_examples.training_cases({"corpora": {}}, "all", {})


# --------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------


def test_wilson_ci_matches_known_values():
    lo, hi = metrics.wilson_ci(12, 99)  # paper Table 6: 12/99 -> [7.0, 20.1] (rounded differently)
    assert (round(100 * lo, 1), round(100 * hi, 1)) == (7.1, 20.0)
    lo, hi = metrics.wilson_ci(0, 33)  # paper: [0.0, 10.4]
    assert lo == 0.0 and round(100 * hi, 1) == 10.4
    lo, hi = metrics.wilson_ci(17, 99)  # paper: [11.0, 26.0]
    assert (round(100 * lo, 1), round(100 * hi, 1)) == (11.0, 25.8)
    # closed form: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    z, k, n = 1.959963984540054, 5, 20
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    expected = ((centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n))
    assert metrics.wilson_ci(k, n) == pytest.approx(expected, abs=1e-9)
    assert all(math.isnan(x) for x in metrics.wilson_ci(0, 0))


DOC = "\n".join(f"line {k}" for k in range(1, 11))  # 10 lines
GOLD = DOC.replace("line 5", "line five")
CASE = EditCase("toy/1", DOC, GOLD, "Spell out five.")
ORACLE = Program([Copy(1, 4), Gen("line five"), Copy(6, 10)])


def score(text):
    return sft.run_scoring.score_program(CASE, text, system="test")


def test_the_oracle_is_what_we_think():
    assert oracle_program(DOC, GOLD) == ORACLE


@pytest.mark.parametrize(
    "program, start_acc, end_acc, category",
    [
        (ORACLE, 1.0, 1.0, "EM (fully correct)"),
        (
            Program([Copy(1, 4), Gen("line 5!"), Copy(6, 10)]),
            1.0,
            1.0,
            "Spans all correct, <gen>-text wrong",
        ),
        (
            Program([Copy(1, 4), Gen("line five"), Copy(6, 10), Copy(1, 1)]),
            1.0,
            1.0,
            "Spans all correct, <gen>-text wrong",
        ),  # op-count mismatch
        (Program([Copy(1, 3), Gen("line five"), Copy(6, 10)]), 1.0, 0.5, "Start correct, end off"),
        (Program([Copy(2, 4), Gen("line five"), Copy(7, 10)]), 0.0, 1.0, "End correct, start off"),
        (Program([Copy(1, 5), Gen("x"), Copy(5, 10)]), 0.5, 0.5, "Both endpoints off"),
        (Program([Gen(GOLD)]), 0.0, 0.0, "EM (fully correct)"),  # EM without any copy
        (Program([Copy(1, 4)]), 0.5, 0.5, "Both endpoints off"),  # missing copy counts wrong
    ],
)
def test_endpoint_accuracy_and_taxonomy(program, start_acc, end_acc, category):
    r = score(program.render())
    assert r.parsed
    assert (r.start_acc, r.end_acc) == (start_acc, end_acc)
    assert r.category == category


def test_scores_of_an_exact_program():
    r = score(ORACLE.render())
    assert r.em and r.trimmed_em and r.program_em and not r.out_of_range
    assert r.output == GOLD
    gen_only = score(Program([Gen(GOLD)]).render())
    assert gen_only.em and not gen_only.program_em  # another decomposition of the same gold


def test_parse_failure_and_out_of_range():
    bad = score('<program><copy lines="1-4"/><gen>\nx\n')
    assert not bad.parsed and bad.output is None and bad.category == "Parse failure"
    assert not bad.em and bad.n_oracle_copies == 2
    clipped = score(Program([Copy(1, 4), Gen("line five"), Copy(6, 12)]).render())
    assert clipped.out_of_range and clipped.em  # clipped like the paper's resolver


def test_trailing_newline_convention():
    assert metrics.equal_up_to_one_newline("a\nb\n", "a\nb")
    assert not metrics.equal_up_to_one_newline("a\nb\n\n", "a\nb")
    assert not metrics.equal_up_to_one_newline(" a", "a")


def test_summary_and_taxonomy_counts():
    programs = [
        ORACLE,
        Program([Copy(1, 3), Gen("line five"), Copy(6, 10)]),
        Program([Copy(2, 4), Gen("line five"), Copy(7, 10)]),
    ]
    results = []
    for seed, p in enumerate(programs):
        r = score(p.render())
        r.extra["seed"] = seed % 2
        r.wall_s = 0.1 * (seed + 1)
        results.append(r)
    results.append(score("<program>"))
    s = sft.run_scoring.summarize(results)
    assert (s["n"], s["em"], s["parsed"], s["program_em"]) == (4, 1, 3, 1)
    assert s["em_ci"] == pytest.approx(metrics.wilson_ci(1, 4))
    assert s["start_acc"] == pytest.approx((2 + 2 + 0 + 0) / 8)
    assert s["end_acc"] == pytest.approx((2 + 1 + 2 + 0) / 8)
    assert s["wall_ms_median"] == pytest.approx(200.0)
    counts = sft.run_scoring.taxonomy(results)
    assert list(counts) == list(sft.run_scoring.TAXONOMY)
    assert sum(counts.values()) == 4
    assert counts["Parse failure"] == 1 and counts["EM (fully correct)"] == 1


# --------------------------------------------------------------------------------------------
# Training examples
# --------------------------------------------------------------------------------------------


def test_labels_are_ignored_exactly_on_prompt_and_forced_ids(tok):
    from cadlib.decoding.fsm import transcript

    ex = sft.run_examples.build_example(CASE, tok, sft.run_examples.prompt_ids(CASE, tok))
    assert ex.input_ids[: ex.n_prompt] == tuple(sft.run_examples.prompt_ids(CASE, tok))
    tr = transcript(ORACLE, DOC, tok)
    assert ex.input_ids[ex.n_prompt :] == tr.ids  # the target is the decoder's transcript
    assert ex.kinds == ("prompt",) * ex.n_prompt + tr.kinds
    for i, label, kind in zip(ex.input_ids, ex.labels, ex.kinds, strict=True):
        if kind in ("prompt", "forced", "splice"):
            assert label == sft.run_examples.IGNORE
        else:
            assert kind in ("choice", "gen") and label == i
    assert {"forced", "splice", "choice", "gen"} <= set(ex.kinds)
    assert ex.n_loss == tr.count("choice") + tr.count("gen")


def test_the_target_decodes_to_the_program(tok):
    from cadlib.decoding.fsm import Transcript
    from cadlib.grammar import parse_program
    from cadlib.resolver import resolve

    ex = sft.run_examples.build_example(CASE, tok, sft.run_examples.prompt_ids(CASE, tok))
    target = Transcript(ex.input_ids[ex.n_prompt :], ex.kinds[ex.n_prompt :])
    program = parse_program(target.program_text(tok))
    assert program == ORACLE
    assert resolve(program, DOC) == GOLD
    assert target.text(tok).startswith('<program>\n<copy lines="1-4"/>\nline 1\n')


def test_escaped_gen_bodies_round_trip(tok):
    from cadlib.decoding.fsm import Transcript
    from cadlib.grammar import parse_program

    case = EditCase("toy/esc", "a\nb\nc", "a\nx </gen> <copy y\nc", "Add markup.")
    ex = sft.run_examples.build_example(case, tok, [1, 2, 3])
    target = Transcript(ex.input_ids[3:], ex.kinds[3:])
    assert "</gen> <copy" not in target.program_text(tok).split("<gen>")[1].split("</gen>")[0]
    assert parse_program(target.program_text(tok)) == oracle_program(case.doc, case.gold)


def test_loss_on_every_transcript_id_is_an_option(tok):
    ex = sft.run_examples.build_example(
        CASE, tok, [1, 2], loss_kinds=("choice", "gen", "forced", "splice")
    )
    assert ex.labels[:2] == (sft.run_examples.IGNORE, sft.run_examples.IGNORE)
    assert ex.labels[2:] == ex.input_ids[2:]
    with pytest.raises(ValueError, match="kinds"):
        sft.run_examples.build_example(CASE, tok, [1], loss_kinds=("copy",))


def test_overlong_examples_are_truncated_or_dropped_and_reported(tok):
    full = sft.run_examples.build_example(CASE, tok, sft.run_examples.prompt_ids(CASE, tok))
    cut_at = full.n_prompt + 12
    kept, report = sft.run_examples.build_examples(
        [CASE], tok, max_length=cut_at, overlong="truncate"
    )
    assert report["truncated"] == [CASE.id] and not report["dropped"]
    assert len(kept[0]) == cut_at and kept[0].labels == full.labels[:cut_at]
    assert report["loss_tokens_lost"] == full.n_loss - kept[0].n_loss > 0
    kept, report = sft.run_examples.build_examples([CASE], tok, max_length=cut_at, overlong="drop")
    assert kept == [] and report["dropped"] == [CASE.id]
    kept, report = sft.run_examples.build_examples(
        [CASE], tok, max_length=full.n_prompt, overlong="truncate"
    )
    assert kept == [] and report["dropped"] == [CASE.id]  # nothing left to learn
    kept, report = sft.run_examples.build_examples([CASE], tok, max_length=None)
    assert kept == [full] and report["truncated"] == report["dropped"] == []


def test_collate_pads_ids_and_ignores_padding():
    rows = [{"input_ids": [5, 6, 7], "labels": [-100, 6, 7]}, {"input_ids": [8], "labels": [8]}]
    batch = sft.run_examples.collate(rows, pad_id=0)
    assert batch["input_ids"].tolist() == [[5, 6, 7], [8, 0, 0]]
    assert batch["labels"].tolist() == [[-100, 6, 7], [8, -100, -100]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]


def test_profiles_and_overrides():
    P = sft.profiles.choose("paper")
    assert (P["lr"], P["betas"], P["warmup"], P["grad_accum"], P["micro_batch"]) == (
        2e-5,
        (0.9, 0.95),
        0.03,
        8,
        1,
    )
    assert (P["max_length"], P["epochs"], P["seeds"]) == (3072, {"py": 8, "combined": 6}, (0, 1, 2))
    assert P["gradient_checkpointing"] and P["train_sets"] == ("py", "combined")
    P = sft.profiles.choose("cpu", epochs=3, seeds=1, train_sets="combined")
    assert P["epochs"] == {"py": 3, "combined": 3} and P["seeds"] == (1,)
    with pytest.raises(ValueError, match="train set"):
        sft.profiles.choose("cpu", train_sets=["all"])
    with pytest.raises(ValueError, match="profile"):
        sft.profiles.choose("gpu")


def test_spread_takes_evenly_spaced_cases():
    cases = fake_corpus("Python", 40)
    assert [c.id for c in sft.run_pilot.spread(cases, 4)] == [
        f"Python/{k}" for k in (0, 10, 20, 30)
    ]
    assert sft.run_pilot.spread(cases, None) == cases


def test_free_form_replies_are_extracted():
    reply = 'Sure!\n<program>\n<copy lines="1-2"/>\n</program>\nDone. </program>'
    assert sft.run_evaluation.extract_program(reply) == '<program>\n<copy lines="1-2"/>\n</program>'
    assert sft.run_evaluation.extract_program("no program") == "no program"
    assert (
        sft.run_evaluation.extract_document("Here:\n```python\n    return 1\n```\nok")
        == "    return 1"
    )
    assert sft.run_evaluation.extract_document("    return 1\n") == "    return 1\n"
    r = sft.run_evaluation.score_output(CASE, GOLD + "\n", system="regen")
    assert r.em and r.extra["free_form"] and r.category == "EM (fully correct)"


def test_expected_speedup_matches_the_paper():
    assert sft.run.expected_speedup(17 / 99) == pytest.approx(1.42, abs=0.005)
    assert sft.run.expected_speedup(0.0) == 1.0


# --------------------------------------------------------------------------------------------
# Training smoke test (tiny random Llama)
# --------------------------------------------------------------------------------------------

SMALL = EditCase(
    "toy/small", "a = 1\nb = 2\nprint(a + b)", "a = 1\nb = 3\nprint(a + b)", "Set b to 3."
)


def _train_tiny(tok, steps=4):
    from cadlib.models import load_model

    model = load_model("tiny-random", device="cpu", seed=0)
    ex = sft.run_examples.build_example(SMALL, tok, sft.run_examples.prompt_ids(SMALL, tok))
    recipe = dict(
        seed=0,
        epochs=steps,
        lr=3e-3,
        betas=(0.9, 0.95),
        weight_decay=0.0,
        warmup=0.0,
        grad_accum=1,
        micro_batch=1,
        gradient_checkpointing=False,
        device="cpu",
    )
    return model, sft.run_training.train(model, tok, [ex], None, save=False, **recipe)


@pytest.mark.slow
def test_training_lowers_the_loss_and_is_deterministic(tok):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model, run = _train_tiny(tok)
        _, again = _train_tiny(tok)
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(False)  # Trainer(full_determinism) switched it on
    assert run.optimizer_steps == 4 and len(run.losses) == 4
    assert all(math.isfinite(x) for x in run.losses)
    assert run.losses[-1] < run.losses[0]
    assert not model.training  # handed back in eval mode
    assert again.losses == run.losses  # same seed, same CPU thread count: same numbers


def test_summary_record_is_strict_json():
    import json

    record = sft.run_scoring.summary_record(
        [sft.run_evaluation.score_output(CASE, GOLD, system="regen")]
    )
    assert record["start_acc"] is None and record["em"] == 1
    json.dumps(record, allow_nan=False)
