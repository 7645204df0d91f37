"""How a chapter starts and ends (cadlib.record.session): the profile and its overrides, a clear
error for an unknown profile, the results file with the parameters, the Recorder."""

import json

import pytest

from cadlib.record import session
from cadlib.record.card import Card
from cadlib.record.replay import Recorder

TOY_PROFILES = {"cpu": {"n": 2, "corpora": ("a",)}, "paper": {"n": 9, "corpora": ("a", "b")}}


def _card(name: str, records: bool = False) -> Card:
    return Card(name, "1", f"01_{name}", "a title", "a question?", records=records)


def test_start_picks_the_profile_and_its_overrides():
    ns = {"profile": "paper", "seed": 3, "device": "cpu", "n": None, "corpora": ("b",)}
    ch = session.start(_card("losslessness"), TOY_PROFILES, ns)
    assert ch.P == {"n": 9, "corpora": ("b",), "profile": "paper"}
    assert ch.profile == "paper" and ch.seed == 3 and ch.device == "cpu" and ch.rec is None
    assert ch.name == "losslessness" and ch.elapsed() >= 0


def test_start_rejects_an_unknown_profile():
    with pytest.raises(ValueError, match="unknown profile 'gpu'; valid: 'cpu', 'paper'"):
        session.start(_card("losslessness"), TOY_PROFILES, {"profile": "gpu"})


def test_a_chapter_s_own_chooser_is_used_after_the_profile_check():
    calls = []

    def own(profile, **overrides):
        calls.append((profile, overrides))
        return {**TOY_PROFILES[profile], "profile": profile, "normalized": True}

    ch = session.start(_card("sft_pilot"), TOY_PROFILES, {"profile": "cpu", "n": 5}, choose=own)
    assert ch.P["normalized"] and calls == [("cpu", {"n": 5})]
    with pytest.raises(ValueError, match="unknown profile"):
        session.start(_card("sft_pilot"), TOY_PROFILES, {"profile": "gpu"}, choose=own)


def test_record_chapters_get_a_recorder():
    ch = session.start(
        _card("kernel", records=True), TOY_PROFILES, {"profile": "paper", "resume": True}
    )
    assert isinstance(ch.rec, Recorder)
    assert (ch.rec.chapter, ch.rec.profile, ch.rec.resume) == ("kernel", "paper", True)


@pytest.mark.parametrize(
    "profile, name", [("cpu", "formats.json"), ("paper", "formats.paper.json")]
)
def test_write_writes_to_the_results_dir_with_the_params(tmp_path, monkeypatch, profile, name):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    ch = session.start(_card("formats"), TOY_PROFILES, {"profile": profile, "n": 4})
    path = ch.write({"x": 1.5}, {"x": 2}, model=None, tokenizer="qwen2.5", extra_params={"seed": 7})
    assert path == tmp_path / name
    record = json.loads(path.read_text())
    assert record["chapter"] == "formats" and record["profile"] == profile
    assert record["params"] == {
        "n": 4,
        "corpora": list(TOY_PROFILES[profile]["corpora"]),
        "profile": profile,
        "seed": 7,
    }
    assert record["numbers"] == {"x": 1.5} and record["paper"] == {"x": 2}
    assert record["model"] is None and record["tokenizer"] == "qwen2.5"
    assert "seed" not in ch.P  # the extra params go to the file only


def test_start_reads_the_parameters_cell_from_the_namespace():
    """The card form: profile, seed and device are read from the notebook's globals, and every
    other name that is a profile key overrides the profile where it is not None; names that are
    not profile keys (imports, helpers) are ignored."""
    card = Card("kernel", "2", "02_kernel", "t", "q?", records=True)
    ns = {"profile": "paper", "seed": 3, "device": "cpu", "n": 4, "corpora": None, "json": json}
    ch = session.start(card, TOY_PROFILES, ns)
    assert ch.P == {"n": 4, "corpora": ("a", "b"), "profile": "paper"}
    assert (ch.seed, ch.device, ch.name) == (3, "cpu", "kernel")
    assert isinstance(ch.rec, Recorder) and not ch.rec.resume
    plain = Card("formats", "4", "04_formats", "t", "q?")
    assert session.start(plain, TOY_PROFILES, {"profile": "cpu"}).rec is None
    with pytest.raises(ValueError, match="unknown profile 'gpu'"):
        session.start(card, TOY_PROFILES, {"profile": "gpu"})


def test_the_registry_lists_every_chapter_once_with_its_notebook():
    from cadlib.chapters import CHAPTERS, card_of, cards
    from cadlib.paths import repo_root

    names = [c.name for c in cards()]
    assert len(names) == len(set(names)) == len(CHAPTERS)
    for card in cards():
        assert (repo_root() / "notebooks" / f"{card.notebook}.ipynb").exists(), card
    assert card_of("fim").notebook == "08_fim_constraint"
    with pytest.raises(ValueError, match="unknown chapter 'lossless'"):
        card_of("lossless")


def test_case_records_are_one_compact_json_object_a_line_beside_the_results(tmp_path, monkeypatch):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    ch = session.start(_card("kernel"), TOY_PROFILES, {"profile": "paper"})
    path = ch.write_cases([{"case": "Python/0", "text": "é", "n": 1}, {"case": "b"}])
    assert path == tmp_path / "kernel.paper.cases.jsonl"
    assert (
        path.read_text(encoding="utf-8") == '{"case":"Python/0","text":"é","n":1}\n{"case":"b"}\n'
    )


def test_start_reads_only_literals_so_a_rerun_cell_never_passes_a_loaded_object():
    loaded = object()  # what a later cell may have bound to a parameter's name
    ns = {"profile": "cpu", "n": loaded, "corpora": ["x", ("y", 1)]}
    ch = session.start(_card("kernel"), TOY_PROFILES, ns)
    assert ch.P["n"] == 2 and ch.P["corpora"] == ["x", ("y", 1)]
