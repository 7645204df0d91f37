"""How a chapter starts and ends (cadlib.book.chapter): the profile and its overrides, a clear
error for an unknown profile, the results file with the parameters, the Recorder."""

import json

import pytest

from cadlib.book import chapter
from cadlib.book.replay import Recorder

PROFILES = {"cpu": {"n": 2, "corpora": ("a",)}, "paper": {"n": 9, "corpora": ("a", "b")}}


def test_start_picks_the_profile_and_its_overrides():
    ch = chapter.start("losslessness", PROFILES, "paper", seed=3, device="cpu", n=None,
                       corpora=("b",))  # fmt: skip
    assert ch.P == {"n": 9, "corpora": ("b",), "profile": "paper"}
    assert ch.profile == "paper" and ch.seed == 3 and ch.device == "cpu" and ch.rec is None
    assert ch.name == "losslessness" and ch.elapsed() >= 0


def test_start_rejects_an_unknown_profile_parameter_or_chapter():
    with pytest.raises(ValueError, match="unknown profile 'gpu'; valid: 'cpu', 'paper'"):
        chapter.start("losslessness", PROFILES, "gpu")
    with pytest.raises(ValueError, match="unknown parameter"):
        chapter.start("losslessness", PROFILES, "cpu", n_fuz=10)
    with pytest.raises(ValueError, match="unknown chapter 'lossless'"):
        chapter.start("lossless", PROFILES, "cpu")


def test_a_chapter_s_own_chooser_is_used_after_the_profile_check():
    calls = []

    def own(profile, **overrides):
        calls.append((profile, overrides))
        return {**PROFILES[profile], "profile": profile, "normalized": True}

    ch = chapter.start("sft_pilot", PROFILES, "cpu", choose=own, n=5)
    assert ch.P["normalized"] and calls == [("cpu", {"n": 5})]
    with pytest.raises(ValueError, match="unknown profile"):
        chapter.start("sft_pilot", PROFILES, "gpu", choose=own)


def test_record_chapters_get_a_recorder():
    ch = chapter.start("kernel", PROFILES, "paper", record=True, resume=True)
    assert isinstance(ch.rec, Recorder)
    assert (ch.rec.chapter, ch.rec.profile, ch.rec.resume) == ("kernel", "paper", True)


@pytest.mark.parametrize("profile, name",
                         [("cpu", "formats.json"), ("paper", "formats.paper.json")])
def test_write_writes_to_the_results_dir_with_the_params(tmp_path, monkeypatch, profile, name):
    monkeypatch.setenv("CADLIB_RESULTS_DIR", str(tmp_path))
    ch = chapter.start("formats", PROFILES, profile, n=4)
    path = ch.write({"x": 1.5}, {"x": 2}, model=None, tokenizer="qwen2.5",
                    extra_params={"seed": 7})  # fmt: skip
    assert path == tmp_path / name
    record = json.loads(path.read_text())
    assert record["chapter"] == "formats" and record["profile"] == profile
    assert record["params"] == {"n": 4, "corpora": list(PROFILES[profile]["corpora"]),
                                "profile": profile, "seed": 7}  # fmt: skip
    assert record["numbers"] == {"x": 1.5} and record["paper"] == {"x": 2}
    assert record["model"] is None and record["tokenizer"] == "qwen2.5"
    assert "seed" not in ch.P  # the extra params go to the file only
