"""The FIM chapter's experiments: constrained <gen> bodies in localized-edit mode (the decoder
hook), seeded FIM cuts, honest budget accounting, post-hoc context trimming (tiny random
Llama on CPU, SmolLM2's tokenizer)."""

import random

import pytest
import torch

from cadlib.chapters import fim_constraint as FX
from cadlib.corpora import EditCase, load_corpus
from cadlib.decoding.decoder import CopyDecoder
from cadlib.decoding.fsm import token_table
from cadlib.fim import FIMConstraint
from cadlib.fim import completion as FC
from cadlib.grammar import Copy, Gen, Program
from cadlib.oracle import oracle_program
from cadlib.resolver import resolve

PROMPT = 'def add(a, b):\n    """Add two numbers."""\n'


def case(doc, gold, cid="toy/0"):
    return EditCase(
        cid, doc, gold, "Fix the bug.", meta={"prompt": PROMPT, "test": "", "entry_point": "add"}
    )


CASES = [
    case(
        "    total = a - b\n    return total\n", "    total = a + b\n    return total\n", "toy/gc"
    ),
    case(
        "    x = a\n    total = x - b\n    return total\n",
        "    x = a\n    total = x + b\n    return total\n",
        "toy/cgc",
    ),
    case(
        "    if a:\n        return a - b\n    return b\n",
        "    if a:\n        return a + b\n    return b\n",
        "toy/nested",
    ),
]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


CODE = [" x", " =", " a", " +", " b", "\n", "    ", " 1", "(", ")", ":", " if", " return", "x"]


def random_walk(tok, made, seed, min_steps=3):
    """A gen_processor that builds GenBodyMask, then steers the model: a seeded random code
    token among those the mask allows, and </gen> as soon as it is allowed after
    ``min_steps`` body tokens (so bodies are random code that ends where it can)."""
    close = token_table(tok).gen_close[0]
    code = [i for t in CODE for i in [tok.encode(t, add_special_tokens=False)] if len(i) == 1]
    rng = random.Random(seed)

    def factory(left, right):
        mask = FX.run_edits.GenBodyMask(PROMPT + left, right, tok)
        made.append(mask)

        def proc(ids, scores):
            out = mask(ids, scores)
            ok = [t[0] for t in code if torch.isfinite(out[t[0]])]
            if len(ids) >= min_steps and torch.isfinite(out[close]):
                out[close] += 1e4
            elif ok:
                out[rng.choice(ok)] += 1e4
            return out

        return proc

    return factory


# ----- the decoder hook (localized-edit mode) --------------------------------------------------


def test_localized_edit_keeps_the_given_copies(model, tok):
    dec = CopyDecoder(model, tok, max_new_tokens=6)
    for c in CASES:
        program = oracle_program(c.doc, c.gold)
        res = dec.decode(c.doc, c.instruction, program=program, free_gen=True)
        assert res.error is None and res.budget_closed
        got = res.program
        assert [type(op) for op in got] == [type(op) for op in program]
        assert got.copies == program.copies  # spans as given, bodies by the model


def test_gen_processor_sees_the_resolved_contexts(model, tok):
    doc = "a = 1\nb = 2\nc = 3\nd = 4\n"
    program = Program([Copy(1, 2), Gen("B = 2"), Copy(4, 5)])
    seen = []

    def factory(left, right):
        seen.append((left, right))
        return lambda ids, scores: scores

    dec = CopyDecoder(model, tok, max_new_tokens=4)
    with_hook = dec.decode(doc, "Edit.", program=program, free_gen=True, gen_processor=factory)
    without = dec.decode(doc, "Edit.", program=program, free_gen=True)
    assert seen == [("a = 1\nb = 2\n", "\nd = 4\n")]
    assert with_hook.text == without.text  # an identity processor changes nothing
    assert len(with_hook.bodies) == 1
    forced = dec.decode(doc, "Edit.", program=program)  # forced mode is unchanged
    assert forced.text == resolve(program, doc)


def test_free_gen_needs_a_program(model, tok):
    dec = CopyDecoder(model, tok, max_new_tokens=4)
    with pytest.raises(ValueError, match="free_gen"):
        dec.decode("x = 1\n", "Edit.", free_gen=True)
    with pytest.raises(ValueError, match="gen_processor"):
        dec.decode(
            "x = 1\n",
            "Edit.",
            program=Program([Copy(1, 2)]),
            gen_processor=lambda left, right: None,
        )


# ----- constrained bodies always parse ---------------------------------------------------------


def test_constrained_bodies_parse_when_the_model_ends_them(model, tok):
    dec = CopyDecoder(model, tok, max_new_tokens=16)
    ended = []
    for seed in range(6):
        for c in CASES:
            made = []
            res = dec.decode(
                c.doc,
                c.instruction,
                program=oracle_program(c.doc, c.gold),
                free_gen=True,
                gen_processor=random_walk(tok, made, seed),
            )
            end = made[-1].finish(FX.run_edits._body_ids(res, token_table(tok).gen_close))
            assert end in FC.ENDS
            assert FC.parses(PROMPT + res.text) == (end != "budget, not closable"), res.text
            if end == "model ended":
                ended.append(made[-1].middle)
    assert sum(bool(m.strip()) for m in ended) >= 3  # real bodies, not only empty ones


def test_constrained_outcomes_are_honest(model, tok):
    """A random model rarely ends: every output parses unless it is reported as a budget
    exhausted where the middle could not be closed."""
    for budget in (1, 5):
        rows = FX.run_edits.localized_edit(
            model,
            tok,
            CASES,
            constrained=True,
            budget=budget,
            system="tiny",
            test_timeout=None,
            progress=False,
        )
        assert set(rows.end) <= set(FC.ENDS)
        assert (rows.body_tokens <= budget).all()
        for r in rows.itertuples():
            assert r.parses == (r.end != "budget, not closable"), (r.end, r.output)
            assert len(r.mask_s) == len(r.middle_chars) >= 1
    free = FX.run_edits.localized_edit(
        model,
        tok,
        CASES,
        constrained=False,
        budget=3,
        system="tiny",
        test_timeout=None,
        progress=False,
    )
    assert set(free.end) <= {"model ended", "budget, closable", "budget, not closable"}
    assert (free.parses == (free.end != "budget, not closable")).all()


def test_body_mask_follows_the_strip_at_most_one_rule(tok):
    left, right = PROMPT + "    x = a\n", "\n    return x\n"
    m = FX.run_edits.GenBodyMask(left, right, tok)
    assert m.can_end()  # an empty body resolves to a blank line
    ids = tok.encode("\n    x = x + b\n", add_special_tokens=False)
    m._advance(ids)
    assert m.middle == "    x = x + b" and m.can_end()
    mask = m.allowed()
    assert mask[m.close_ids[0]]
    broken = FX.run_edits.GenBodyMask(left, right, tok)
    broken._advance(tok.encode("\n    x = (", add_special_tokens=False))
    assert broken.constraint.viable() and not broken.can_end()
    assert not broken.allowed()[broken.close_ids[0]]


def test_single_gen_cases():
    two = case("a\nb\nc\n", "A\nb\nC\n")
    assert FX.run_edits.single_gen_cases([*CASES, two]) == CASES


# ----- FIM problems ----------------------------------------------------------------------------


def solutions():
    bodies = [
        "    total = 0\n    for x in range(a):\n        total += x * b\n    return total\n",
        "    s = 'a, b'\n    if a > b:\n        return a\n    return [a, b][0]\n",
        "    return sorted([a, b], key=lambda x: (-x, x))[0]\n",
        "    values = {'a': a, 'b': b}\n    return sum(values.values())\n",
    ]
    return [
        EditCase(f"toy/{k}", body, body, "", meta={"prompt": PROMPT})
        for k, body in enumerate(bodies)
    ]


def test_fim_problems_are_seeded_and_cover_both_cuts():
    cases = solutions()
    a = FC.fim_problems(cases, None, seed=3)
    assert a == FC.fim_problems(cases, None, seed=3)
    assert {p.cut for p in a} == {"line", "char"}
    assert len(a) == 2 * len(cases)
    assert any(p != q for p, q in zip(a, FC.fim_problems(cases, None, seed=4), strict=True))
    for p in a:
        source = p.case.meta["prompt"] + p.case.gold
        assert p.left + p.middle + p.right == source
        assert len(p.left) >= len(PROMPT) and p.middle.strip()
        if p.cut == "line":
            assert p.left.endswith("\n") and (p.middle.endswith("\n") or not p.right)
            assert p.middle.count("\n") <= 2
        else:
            assert len(p.middle) <= 60
    some = FC.fim_problems(cases, 2, seed=0)
    assert [p.cut for p in some] == ["line", "char"]


def test_fim_problems_on_humaneval(humanevalpack_dir):
    cases = load_corpus("heval-fix-py", humanevalpack_dir)
    problems = FC.fim_problems(cases, 12, seed=0, max_lines=2, max_chars=40)
    assert problems == FC.fim_problems(cases, 12, seed=0, max_lines=2, max_chars=40)
    assert [p.cut for p in problems].count("char") == 6
    for p in problems:
        assert FC.parses(p.program(p.middle))
        FIMConstraint(p.left, p.right)  # every true split connects


def test_cut_middle_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="unknown cut"):
        FC.cut_middle("x = 1\n", 0, "word", random.Random(0))


# ----- FIM generation: budget exhaustion is reported -----------------------------------------


def test_fim_generate_reports_budget_exhaustion(model, tok):
    problems = FC.fim_problems(solutions(), None, seed=1)[:3]
    for p in problems:
        for constrained in (False, True):
            r = FC.fim_generate(model, tok, p, constrained=constrained, budget=3)
            assert r["end"] in FC.ENDS
            assert r["new_tokens"] <= 3
            if r["end"] != "model ended":
                assert r["new_tokens"] == 3
                assert FC.parses(p.program(r["middle"])) == (r["end"] == "budget, closable")
            elif constrained:
                assert FC.parses(p.program(r["middle"]))
            if constrained:
                assert len(r["mask_s"]) == r["new_tokens"]


def test_fim_completion_rows(model, tok):
    problems = FC.fim_problems(solutions(), 2, seed=0)
    rows = FC.fim_completion(
        model, tok, problems, budget=2, system="tiny", test_timeout=None, progress=False
    )
    assert len(rows) == len(problems) * len(FC.ARMS)
    assert list(rows.arm[: len(FC.ARMS)]) == list(FC.ARMS)
    table = FX.run.validity_table(rows, ["arm"])
    assert (table[list(FC.ENDS)].sum(axis=1) == table.n).all()


def test_fim_prompt_styles(tok):
    p = FC.fim_problems(solutions(), 1, seed=0)[0]
    hole = tok.decode(FC.fim_prompt_ids(p, tok, "hole"))
    cont = tok.decode(FC.fim_prompt_ids(p, tok, "continue"))
    assert FC.FIM_HOLE in hole and hole.endswith("```python\n")
    assert cont.endswith("```python\n" + p.left)
    with pytest.raises(ValueError, match="style"):
        FC.fim_prompt_ids(p, tok, "psm")


# ----- post-hoc context trimming ----------------------------------------------------------------


def test_trim_to_context():
    left = 'def find_max(words):\n    """doc"""\n    return sorted(words, key'
    right = "lambda x: (-len(set(x)), x))[0]\n"
    reply = "def find_max(words):\n    return sorted(words, key=lambda x: (-len(set(x)), x))[0]\n"
    assert FC.trim_to_context(reply, left, right) == "="
    start = FIMConstraint(left, right)

    def accept(middle):
        c = start.fork()
        return c.feed(middle) and c.can_end()

    assert FC.trim_to_context(reply, left, right, accept) == "="
    assert FC.trim_to_context("x = 1\n", left, right) is None
    assert FC.trim_to_context("x(1)\n" + right, left, "", accept) is None  # no anchor


def test_cost_helpers():
    import pandas as pd

    frame = pd.DataFrame(
        dict(method=["a"] * 4, middle_chars=[0, 10, 30, 60], seconds=[1.0, 2.0, 3.0, 4.0])
    )
    out = FX.run_costs.cost_by_length(frame, bins=(0, 25, 100))
    assert out.steps.tolist() == [2, 2] and out["median"].tolist() == [1.5, 3.5]
    assert torch.isfinite(torch.tensor(out.p90.tolist())).all()


def test_system_labels_name_the_model_of_the_profile():
    from cadlib.chapters.fim_constraint.run import system_labels

    assert system_labels("smollm2-135m-instruct") == ("SmolLM2 untrained", "SmolLM2 + SFT (ch. 7)")
    untrained, tuned = system_labels("Qwen/Qwen2.5-Coder-1.5B-Instruct")
    assert untrained == "Qwen2.5-Coder-1.5B-Instruct untrained"
    assert tuned == "Qwen2.5-Coder-1.5B-Instruct + SFT (ch. 7)"


def test_budget_close_finishes_a_cut_middle_with_the_witness(model, tok):
    """Opt-in: a constrained middle the budget cuts is finished by the witness, counted as
    closed by the constraint, never as ended by the model or as budget-closed."""
    problems = FC.fim_problems(solutions(), None, seed=1)[:3]
    ends = []
    for p in problems:
        r = FC.fim_generate(model, tok, p, constrained=True, budget=2, close_budget=True)
        ends.append(r["end"])
        if r["end"] == FC.CLOSED_BY_CONSTRAINT:
            assert r["witness"] is not None and r["middle"].endswith(r["witness"])
            assert FC.parses(p.program(r["middle"]))
        else:
            assert r["witness"] is None
    assert FC.CLOSED_BY_CONSTRAINT in ends
    rows = FC.fim_completion(
        model,
        tok,
        problems,
        budget=2,
        system="t",
        test_timeout=None,
        progress=False,
        close_budget=True,
    )
    table = FX.run.validity_table(rows, ["arm"]).set_index("arm")
    ends_cols = [*FC.ENDS, FC.CLOSED_BY_CONSTRAINT]
    assert (table[ends_cols].sum(axis=1) == table.n).all()
    closed = table.loc["FIM-constrained", FC.CLOSED_BY_CONSTRAINT]
    assert closed > 0 and table.loc["unconstrained", FC.CLOSED_BY_CONSTRAINT] == 0
    assert (
        table.loc["FIM-constrained", "ended_and_parses"] <= table.loc["FIM-constrained", FC.ENDS[0]]
    )
