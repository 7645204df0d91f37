"""Every chapter's ``paper`` profile against the one table of the paper's settings
(cadlib.book.paper_settings), and the ``smoke`` profiles against the ``paper`` path they check."""

import pytest
import torch

from cadlib.book import paper_settings
from cadlib.book.paper_settings import UNPUBLISHED
from cadlib.chapters import ceiling, kernel
from cadlib.chapters import llama_cpp as llama
from cadlib.chapters import perturbation as perturb
from cadlib.chapters import sft_pilot as sft
from cadlib.chapters.decoding import profiles as decoding
from cadlib.chapters.fim_constraint import profiles as fim
from cadlib.models import STAND_INS, TINY_SHAPES, check_available, resolve_dtype

CHAPTERS = {
    "kernel": kernel.profiles.PROFILES,
    "ceiling": ceiling.profiles.PROFILES,
    "perturbation": perturb.profiles.PROFILES,
    "decoding": decoding.PROFILES,
    "sft_pilot": sft.profiles.PROFILES,
    "fim": fim.PROFILES,
}
#: The chapters that run a model have a smoke profile (make test-smoke); chapter 6b has no
#: paper setting (llama.cpp is the paper's future work), so it is not in CHAPTERS.
#: Every chapter's ``headlines.PAPER_SETTINGS``, as the pages read them.
PAPER_SETTINGS = paper_settings.settings()
SMOKE = {
    **{k: CHAPTERS[k] for k in ("kernel", "decoding", "sft_pilot", "fim")},
    "llama_cpp": llama.profiles.PROFILES,
}


def _on_gpu(key, value):
    """A dtype as the paper profile runs it on a GPU (None / "auto": bf16 there)."""
    if key == "dtype":
        return str(resolve_dtype(value, torch.device("cuda"))).removeprefix("torch.")
    return value


def test_every_chapter_with_settings_is_checked():
    assert set(PAPER_SETTINGS) == set(CHAPTERS)


@pytest.mark.parametrize("chapter", sorted(PAPER_SETTINGS))
def test_paper_profile_holds_the_papers_settings(chapter):
    paper = CHAPTERS[chapter]["paper"]
    for key, setting in PAPER_SETTINGS[chapter].items():
        assert key in paper or key == "dtype", f"{chapter}: no parameter {key!r}"
        ours = _on_gpu(key, paper.get(key))
        assert ours == setting.value, (
            f"{chapter}.{key}: profile {ours!r} != table {setting.value!r}"
        )


@pytest.mark.parametrize("chapter", sorted(PAPER_SETTINGS))
def test_every_difference_from_the_paper_is_declared_with_a_reason(chapter):
    for key, s in PAPER_SETTINGS[chapter].items():
        if s.deviates:
            assert s.deviation and len(s.deviation) > 20, f"{chapter}.{key}: undeclared deviation"
        else:
            assert s.deviation is None, f"{chapter}.{key}: a stale deviation (same as the paper)"
        assert s.source, f"{chapter}.{key}: no source in the paper"


def test_the_known_deviations_are_the_declared_ones():
    declared = paper_settings.deviations()
    assert set(declared["sft_pilot"]) == {"max_length"}
    assert set(declared["kernel"]) == {"models"}
    assert PAPER_SETTINGS["sft_pilot"]["max_length"].paper == 1536
    assert all(s.paper == UNPUBLISHED for s in PAPER_SETTINGS["fim"].values())
    frame = paper_settings.settings_table()
    assert len(frame) == sum(map(len, PAPER_SETTINGS.values()))


def test_sft_and_fim_paper_profiles_use_the_papers_code_model():
    model = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    assert sft.profiles.PROFILES["paper"]["model"] == fim.PROFILES["paper"]["model"] == model
    assert sft.profiles.choose("paper")["seeds"] == (0, 1, 2)
    # chapter 8 loads the checkpoint chapter 7 writes in the same profile
    path = sft.run_training.checkpoint_dir("checkpoints", model, "py", 0)
    assert fim.PROFILES["paper"]["checkpoint"] == path.as_posix()
    assert (
        sft.profiles.PROFILES["cpu"]["model"] == "smollm2-135m-instruct"
    )  # the cpu profile as before


@pytest.mark.parametrize("chapter", SMOKE)
def test_smoke_profile_takes_the_paper_path_on_a_toy_qwen2(chapter):
    profiles = SMOKE[chapter]
    smoke, paper = profiles["smoke"], profiles["paper"]
    assert set(smoke) == set(paper)
    models = smoke["models"] if chapter == "kernel" else (smoke["model"],)
    for name in models:
        shape = TINY_SHAPES[STAND_INS.get(name, name)]
        assert shape["num_hidden_layers"] <= 2 and shape["hidden_size"] <= 64
        assert check_available(name) in ("random init", "local stand-in")
    same = {  # the parameters that choose code paths: as in the paper profile
        "kernel": ("attn_implementation", "dtype", "shared_ar_run", "logits_to_keep", "min_tokens"),
        "decoding": ("dtype", "attn_implementation", "min_span"),
        "sft_pilot": (
            "train_sets",
            "gradient_checkpointing",
            "cross_corpus",
            "overlong",
            "betas",
            "lr",
            "warmup",
            "micro_batch",
        ),
        "fim": ("fim_style",),
        "llama_cpp": ("repeats", "warmup", "threads", "pld_grid", "agreement_cases"),
    }[chapter]
    for key in same:
        assert smoke[key] == paper[key], f"{chapter}.{key}"


def test_smoke_runs_chain_from_chapter_7_to_8_under_build():
    smoke = sft.profiles.choose("smoke")
    assert len(smoke["seeds"]) > 1  # later seeds reload the model by name, as in the paper
    path = sft.run_training.checkpoint_dir(
        sft.profiles.SMOKE_CHECKPOINTS, smoke["model"], "py", smoke["seeds"][0]
    )
    assert fim.PROFILES["smoke"]["checkpoint"] == path.as_posix()
    assert path.as_posix().startswith("_build/")
    assert kernel.run.trials_for(kernel.profiles.PROFILES["smoke"], "qwen2-tiny-random") >= 1
