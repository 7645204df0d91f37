"""ProbeEdit (cadlib.probeedit): 154 deterministic, balanced, round-tripping prose edits.

The operations are tested one by one on small hand-made documents for their exact effect;
the corpus is tested for size, balance, determinism (pinned hashes), gold != doc and the
byte-exact oracle round trip (paper §4.3).
"""

import fnmatch
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from cadlib import probeedit as pe
from cadlib.corpora import load_corpus
from cadlib.grammar import Copy
from cadlib.models.tokenizer import count_tokens
from cadlib.oracle import oracle_program
from cadlib.resolver import resolve

ROOT = Path(__file__).resolve().parent.parent

#: sha256 of the ids joined by newlines; changes only when the set or order of cases does.
IDS_SHA256 = "214b573424370354a67bab1aabe36cb8de0f76872615a3513c03068597e0f7fe"
#: sha256 of every case (id, doc, gold, instruction, meta); changes when anything does. If you
#: change the documents, pools or generator on purpose, bump ``pe.VERSION`` and re-pin both.
CORPUS_SHA256 = "0c022d43fc8c96f7f90fbd7047d26f0633152d305146248f0eec3fe8ed2819a6"


def corpus_hash(cases) -> str:
    rows = [
        {"id": c.id, "doc": c.doc, "gold": c.gold, "instruction": c.instruction, "meta": c.meta}
        for c in cases
    ]
    blob = json.dumps(rows, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()


def ids_hash(cases) -> str:
    return hashlib.sha256("\n".join(c.id for c in cases).encode()).hexdigest()


@pytest.fixture(scope="module")
def corpus():
    return pe.probeedit_corpus()


# --------------------------------------------------------------------------- the corpus


def test_size_names_and_source(corpus):
    assert len(corpus) == pe.N_CASES == 154
    assert corpus.name == "probeedit"
    assert corpus.source.startswith("generated:") and pe.VERSION in corpus.source
    ids = [c.id for c in corpus]
    assert len(set(ids)) == len(ids)
    for case in corpus:
        document, operation, k = case.id.split("/")[1:]
        assert case.id == f"probeedit/{document}/{operation}/{k}"
        assert case.meta["document"] == document and case.meta["operation"] == operation
        assert case.meta["document_kind"] == pe.DOCUMENTS[document]
        json.dumps(case.meta)  # parameters are plain JSON


def test_load_corpus_builds_probeedit(corpus):
    loaded = load_corpus("probeedit")
    assert [c.id for c in loaded] == [c.id for c in corpus]
    assert corpus_hash(loaded) == corpus_hash(corpus)


def test_identical_on_every_run(corpus):
    assert corpus_hash(pe.probeedit_corpus()) == corpus_hash(corpus)


def test_identical_in_another_process_with_another_hash_seed(corpus):
    code = (
        "import hashlib, json; from cadlib.probeedit import probeedit_corpus\n"
        "rows = [{'id': c.id, 'doc': c.doc, 'gold': c.gold, 'instruction': c.instruction,"
        " 'meta': c.meta} for c in probeedit_corpus()]\n"
        "print(hashlib.sha256(json.dumps(rows, sort_keys=True, ensure_ascii=False)"
        ".encode()).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == corpus_hash(corpus)


def test_pinned_hashes(corpus):
    assert ids_hash(corpus) == IDS_SHA256
    assert corpus_hash(corpus) == CORPUS_SHA256, (
        "the ProbeEdit corpus changed: if on purpose, bump cadlib.probeedit.VERSION, re-pin "
        "CORPUS_SHA256 and update data/probeedit/README.md"
    )


def test_every_gold_differs_from_its_doc(corpus):
    assert all(c.gold != c.doc for c in corpus)
    assert len({(c.doc, c.gold) for c in corpus}) == len(corpus)


def test_oracle_round_trip_is_byte_exact(corpus):
    for case in corpus:
        program = oracle_program(case.doc, case.gold)
        assert resolve(program, case.doc) == case.gold, case.id
        assert resolve(program.render(), case.doc) == case.gold, case.id


def test_no_reserved_literals(corpus):
    """The paper's grammar-literal audit (§4.3): no gold holds </gen> or <copy."""
    for case in corpus:
        assert "</gen>" not in case.gold and "<copy" not in case.gold, case.id


def test_balance(corpus):
    per_op = Counter(c.meta["operation"] for c in corpus)
    per_doc = Counter(c.meta["document"] for c in corpus)
    cells = Counter((c.meta["document"], c.meta["operation"]) for c in corpus)
    assert per_op == {op: 14 for op in pe.OPERATIONS}
    assert sorted(per_doc.values()) == [38, 38, 39, 39]
    for document in pe.DOCUMENTS:
        for operation in pe.OPERATIONS:
            assert cells[document, operation] == pe.cases_per_cell(document, operation)
            assert cells[document, operation] in (3, 4)


def test_documents_are_prose_of_the_intended_size():
    for name, text in pe.documents().items():
        assert 500 <= count_tokens(text) <= 950, name
        assert text.count("\n") >= 60, name
        assert text.endswith("\n") and "\r" not in text and "\t" not in text


def test_documents_ship_as_package_data():
    files = resources.files("cadlib").joinpath("data", "probeedit")
    names = sorted(p.name for p in files.iterdir() if p.name.endswith(".md"))
    assert names == sorted(f"{d}.md" for d in pe.DOCUMENTS)
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["cadlib"]
    for name in names:
        assert any(fnmatch.fnmatch(f"data/probeedit/{name}", g) for g in globs), name


def test_instructions_quote_their_targets(corpus):
    for case in corpus:
        params, text = case.meta["params"], case.instruction
        for key in ("old", "new", "text", "typo", "word", "title", "head"):
            if key in params:
                assert params[key] in text, (case.id, key)


def test_typo_cases_put_the_typo_in_the_doc(corpus):
    for case in corpus:
        if case.meta["operation"] == "fix_typo":
            typo, word = case.meta["params"]["typo"], case.meta["params"]["word"]
            assert case.doc.count(typo) == 1 and typo not in case.gold
            assert case.doc.replace(typo, word) == case.gold


def test_number_updates_change_one_number(corpus):
    for case in corpus:
        if case.meta["operation"] != "update_number":
            continue
        old, new = case.meta["params"]["old"], case.meta["params"]["new"]
        nums = re.compile(r"\d[\d,.]*")
        assert nums.sub("#", old) == nums.sub("#", new) and old != new
        changed = [x for x, y in zip(nums.findall(old), nums.findall(new), strict=True) if x != y]
        assert len(changed) == 1
        for day in re.findall(r"(\d+) (?:March|April)", new):
            assert 1 <= int(day) <= 28


def test_some_edits_sit_on_repeated_lines(corpus):
    """Prose repeats itself: some edited lines occur elsewhere in their document verbatim,
    which is what makes a search/replace anchor ambiguous (paper §4.4)."""
    repeated = 0
    for case in corpus:
        lines = case.doc.split("\n")
        counts = Counter(lines)
        program = oracle_program(case.doc, case.gold)
        copied = {
            i for op in program.ops if isinstance(op, Copy) for i in range(op.start, op.end + 1)
        }
        edited = [lines[i - 1] for i in range(1, len(lines) + 1) if i not in copied]
        repeated += any(line.strip() and counts[line] > 1 for line in edited)
    assert repeated >= 5


# --------------------------------------------------------------------------- statistics


def test_corpus_stats_on_a_tiny_corpus():
    from cadlib.corpora import EditCase

    case = EditCase("x", "alpha beta\nb\ngamma delta", "alpha beta\nB\ngamma delta", "", {})
    stats = pe.corpus_stats([case])
    copies = count_tokens("alpha beta") + count_tokens("gamma delta")
    assert stats["n"] == 1 and stats["K"] == 2
    assert stats["T"] == count_tokens(case.gold)
    assert stats["T_copy"] == copies and stats["T_gen"] == stats["T"] - copies
    assert stats["span_mean"] == copies / 2


def test_corpus_stats_and_readme_agree(corpus):
    stats = pe.corpus_stats(corpus)
    assert stats["n"] == 154 and stats["T"] == stats["T_copy"] + stats["T_gen"]
    assert 0.9 < stats["f_line"] < 1.0
    assert stats["K"] >= 2 * 154 - 14  # nearly every case copies before and after its edit
    readme = (ROOT / "data" / "probeedit" / "README.md").read_text()
    assert pe.stats_markdown(stats) in readme, "re-run: python -m cadlib.probeedit --stats"


def test_write_jsonl(tmp_path, corpus):
    assert pe.main(["--write", str(tmp_path)]) == 0
    rows = [json.loads(x) for x in (tmp_path / "probeedit.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [c.id for c in corpus]
    assert rows[0]["gold"] == corpus[0].gold and rows[-1]["meta"] == corpus[-1].meta


# --------------------------------------------------------------------------- structure

SMALL = """# Title

Intro one. Intro two.

## Alpha

First sentence here. Second one
runs over a line. Third.

- item one
- item two
  continues here

## Beta

### Sub

Beta body.
"""


def test_sections_and_blocks():
    secs = pe.sections(SMALL)
    assert [(s.title, s.level, s.start, s.end) for s in secs] == [
        ("Title", 1, 0, 19),
        ("Alpha", 2, 4, 13),
        ("Beta", 2, 13, 19),
        ("Sub", 3, 15, 19),
    ]
    assert secs[3].path == ("Title", "Beta", "Sub") and secs[3].levels == (1, 2, 3)
    kinds = [(b.kind, b.start, b.end) for b in pe.blocks(SMALL)]
    assert kinds == [
        ("heading", 0, 1),
        ("paragraph", 2, 3),
        ("heading", 4, 5),
        ("paragraph", 6, 8),
        ("item", 9, 10),
        ("item", 10, 12),
        ("heading", 13, 14),
        ("heading", 15, 16),
        ("paragraph", 17, 18),
    ]
    assert pe.find_section(SMALL, "Beta", "Sub").start == 15
    with pytest.raises(ValueError, match="matches 0"):
        pe.find_section(SMALL, "Gamma")


def test_sentence_spans():
    text = "One `x.y` ends here. Two (a) is 2.5 m long.\nThree?"
    spans = pe.sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [
        "One `x.y` ends here.",
        "Two (a) is 2.5 m long.",
        "Three?",
    ]


def _block(doc, start):
    return next(b for b in pe.blocks(doc) if b.start == start)


# --------------------------------------------------------------------------- operations


def test_replace_once():
    assert pe.replace_once(SMALL, "Beta body", "Body of beta") == SMALL.replace(
        "Beta body", "Body of beta"
    )
    with pytest.raises(ValueError, match="exactly once"):
        pe.replace_once(SMALL, "item", "entry")  # twice
    with pytest.raises(ValueError, match="exactly once"):
        pe.replace_once(SMALL, "Second one\nruns", "x")  # across lines


def test_rename_everywhere():
    doc = "The job object is\nsmall. Lists of job objects.\nA job object."
    assert pe.rename_everywhere(doc, "job object", "job resource") == (
        "The job resource is\nsmall. Lists of job resources.\nA job resource."
    )
    with pytest.raises(ValueError, match="at least 2"):
        pe.rename_everywhere(doc, "Lists", "Sets")
    with pytest.raises(ValueError, match="longer words"):
        pe.rename_everywhere("a cat, a category", "cat", "dog")
    with pytest.raises(ValueError, match="capitalisation"):
        pe.rename_everywhere("Street trees and street trees and street trees", "street trees", "x")
    with pytest.raises(ValueError, match="broken across lines"):
        pe.rename_everywhere("hot tier, hot\ntier, hot tier", "hot tier", "fast tier")


def test_replace_at():
    assert pe.replace_at("a 30 b 30", 7, "30", "45") == "a 30 b 45"
    with pytest.raises(ValueError):
        pe.replace_at("a 30 b 30", 6, "30", "45")


def test_insert_paragraph_at_the_end_of_a_section():
    gold = pe.insert_paragraph(SMALL, pe.find_section(SMALL, "Alpha"), "New text\non two lines.")
    assert gold == SMALL.replace(
        "  continues here\n\n## Beta", "  continues here\n\nNew text\non two lines.\n\n## Beta"
    )
    last = pe.insert_paragraph(SMALL, pe.find_section(SMALL, "Sub"), "Closing words.")
    assert last == SMALL + "\nClosing words.\n"
    with pytest.raises(ValueError, match="subsections"):
        pe.insert_paragraph(SMALL, pe.find_section(SMALL, "Beta"), "x")


def test_delete_sentence():
    para = _block(SMALL, 6)
    middle = pe.delete_sentence(SMALL, para, 1)  # spans two lines: they are joined
    assert middle == SMALL.replace(
        "First sentence here. Second one\nruns over a line. Third.", "First sentence here. Third."
    )
    first = pe.delete_sentence(SMALL, para, 0)
    assert first == SMALL.replace("First sentence here. Second one", "Second one")
    last = pe.delete_sentence(SMALL, para, 2)
    assert last == SMALL.replace("runs over a line. Third.", "runs over a line.")
    with pytest.raises(ValueError):
        pe.delete_sentence(SMALL, _block(SMALL, 17), 0)  # a one-sentence paragraph


def test_delete_block_removes_an_item_with_its_continuation():
    gold = pe.delete_block(SMALL, _block(SMALL, 10))
    assert gold == SMALL.replace("- item two\n  continues here\n", "")


def test_swap_sections():
    alpha, beta = pe.find_section(SMALL, "Alpha"), pe.find_section(SMALL, "Beta")
    gold = pe.swap_sections(SMALL, alpha, beta)
    assert gold == (
        "# Title\n\nIntro one. Intro two.\n\n## Beta\n\n### Sub\n\nBeta body.\n\n## Alpha\n\n"
        "First sentence here. Second one\nruns over a line. Third.\n\n"
        "- item one\n- item two\n  continues here\n"
    )
    assert sorted(gold.split("\n")) == sorted(SMALL.split("\n"))
    with pytest.raises(ValueError, match="adjacent siblings"):
        pe.swap_sections(SMALL, alpha, pe.find_section(SMALL, "Sub"))


def test_merge_paragraphs_deletes_the_blank_line():
    doc = "# T\n\nOne.\nTwo.\n\nThree.\n\n- item\n"
    assert pe.merge_paragraphs(doc, _block(doc, 2)) == "# T\n\nOne.\nTwo.\nThree.\n\n- item\n"
    with pytest.raises(ValueError, match="two paragraphs"):
        pe.merge_paragraphs(doc, _block(doc, 5))  # followed by a list, not a paragraph


def test_split_paragraph():
    para = _block(SMALL, 6)
    mid_line = pe.split_paragraph(SMALL, para, 1)
    assert mid_line == SMALL.replace("here. Second one", "here.\n\nSecond one")
    after_break = pe.split_paragraph(SMALL, para, 2)
    assert after_break == SMALL.replace("a line. Third.", "a line.\n\nThird.")
    doc = "A b.\nC d.\n"
    assert pe.split_paragraph(doc, _block(doc, 0), 1) == "A b.\n\nC d.\n"
    with pytest.raises(ValueError):
        pe.split_paragraph(SMALL, para, 0)


def test_change_heading_keeps_the_level():
    gold = pe.change_heading(SMALL, pe.find_section(SMALL, "Sub"), "Subsection")
    assert gold == SMALL.replace("### Sub\n", "### Subsection\n")


def test_make_typo():
    rng = random.Random(0)
    for word in ["retention", "compactor", "sensors", "queued", "abcde"]:
        typo = pe.make_typo(word, rng)
        assert typo != word and typo[0] == word[0] and typo[-1] == word[-1]
        assert abs(len(typo) - len(word)) <= 1
    assert pe.make_typo("retention", random.Random(7)) == pe.make_typo(
        "retention", random.Random(7)
    )
    with pytest.raises(ValueError):
        pe.make_typo("abc", rng)


def test_cases_per_cell_is_balanced():
    total = {d: sum(pe.cases_per_cell(d, o) for o in pe.OPERATIONS) for d in pe.DOCUMENTS}
    assert sum(total.values()) == 154 and set(total.values()) == {38, 39}
    for operation in pe.OPERATIONS:
        assert sum(pe.cases_per_cell(d, operation) for d in pe.DOCUMENTS) == 14


def test_unknown_document_fails_loudly():
    with pytest.raises(ValueError, match="valid: meeting_notes"):
        pe.document_text("novel")
