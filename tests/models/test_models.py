"""cadlib.models: names, devices, dtypes, seeds, the hub path (offline) and the packaged SmolLM2."""

import pytest
import torch

from cadlib import models
from cadlib.models import load_model, model_info


@pytest.fixture(scope="module")
def tiny():
    return load_model("tiny-random", device="cpu", seed=0)


def test_tiny_random_loads_in_eval_mode_on_cpu(tiny):
    assert not tiny.training
    info = model_info(tiny)
    assert info["device"] == "cpu" and info["dtype"] == "float32"
    assert info["num_hidden_layers"] == 2 and info["vocab_size"] == 49152
    assert info["attn_implementation"] == "sdpa" and info["parameters"] > 0
    with torch.inference_mode():
        logits = tiny(input_ids=torch.tensor([[1, 2, 3]])).logits
    assert logits.shape == (1, 3, 49152) and torch.isfinite(logits).all()


def test_random_init_is_seeded(tiny):
    same = load_model("tiny-random", device="cpu", seed=0)
    other = load_model("tiny-random", device="cpu", seed=1)
    w = tiny.model.layers[0].mlp.up_proj.weight
    assert torch.equal(w, same.model.layers[0].mlp.up_proj.weight)
    assert not torch.equal(w, other.model.layers[0].mlp.up_proj.weight)


def test_attention_and_dtype_are_honoured():
    model = load_model("tiny-random", device="cpu", dtype="bf16", attn_implementation="eager")
    assert model_info(model)["attn_implementation"] == "eager"
    assert next(model.parameters()).dtype == torch.bfloat16


def test_resolve_device_and_dtype():
    assert models.resolve_device("cpu") == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert models.resolve_device("auto").type == expected
    cpu = torch.device("cpu")
    assert models.resolve_dtype(None, cpu) == torch.float32
    assert models.resolve_dtype("auto", torch.device("cuda")) == torch.bfloat16
    assert models.resolve_dtype("fp16", cpu) == torch.float16
    assert models.resolve_dtype(torch.float64, cpu) == torch.float64
    with pytest.raises(ValueError, match="unknown dtype 'float99'"):
        models.resolve_dtype("float99", cpu)


def test_names_and_random_init_flags():
    assert models.SMOLLM2 in models.MODEL_NAMES and "tiny-random" in models.MODEL_NAMES
    assert all(models.is_random_init(n) for n in models.QWEN25_SHAPES)
    assert not models.is_random_init(models.SMOLLM2)
    assert models.QWEN25_SHAPES["qwen2.5-7b-random"]["num_hidden_layers"] == 28
    assert len(models.load_tokenizer("qwen2.5-0.5b-random")) == 151665  # the Qwen2.5 BPE
    with pytest.raises(ValueError, match="non-empty string"):
        load_model("", device="cpu")


def test_a_saved_folder_goes_through_from_pretrained(tiny, tmp_path):
    """Hub names and local folders share the ``from_pretrained(name)`` path; offline we check
    it with a folder written by ``save_pretrained``."""
    tiny.save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path), device="cpu", attn_implementation="eager")
    saved, back = tiny.state_dict(), loaded.state_dict()
    assert saved.keys() == back.keys() and all(torch.equal(saved[k], back[k]) for k in saved)
    assert model_info(loaded)["attn_implementation"] == "eager"  # the kwargs reach it
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.inference_mode():  # same weights; eager vs sdpa round differently (~1e-7)
        assert torch.allclose(tiny(input_ids=ids).logits, loaded(input_ids=ids).logits, atol=1e-5)


def test_a_hub_name_is_passed_to_from_pretrained(tiny, monkeypatch):
    import transformers

    calls = []

    def fake_from_pretrained(name, **kwargs):
        calls.append((name, kwargs))
        return tiny

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", fake_from_pretrained)
    model = load_model(
        "Qwen/Qwen2.5-Coder-1.5B-Instruct", device="cpu", dtype="fp32", attn_implementation="eager"
    )
    assert model is tiny and not model.training
    assert calls == [
        (
            "Qwen/Qwen2.5-Coder-1.5B-Instruct",
            {"dtype": torch.float32, "attn_implementation": "eager"},
        )
    ]


def test_an_unreachable_name_fails_with_the_offline_names(monkeypatch):
    import transformers

    def unreachable(name, **kwargs):
        raise OSError("We couldn't connect to 'https://huggingface.co'")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", unreachable)
    with pytest.raises(OSError, match="names that work offline are: smollm2-135m-instruct"):
        load_model("someone/some-model", device="cpu")


@pytest.mark.hf_model
@pytest.mark.slow
def test_packaged_smollm2_loads_and_generates():
    model = load_model(models.SMOLLM2, device="cpu", seed=0)
    tokenizer = models.load_tokenizer(models.SMOLLM2)
    assert model_info(model)["vocab_size"] == 49152 and not models.is_random_init(models.SMOLLM2)
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
    if not isinstance(ids, torch.Tensor):  # transformers 5 returns a BatchEncoding
        ids = ids["input_ids"]
    with torch.inference_mode():
        out = model.generate(ids, max_new_tokens=12, do_sample=False)
    text = tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
    assert out.shape[1] > ids.shape[1] and "Paris" in text, text


@pytest.mark.hf_model
@pytest.mark.slow
def test_the_cached_smollm2_folder_holds_the_gguf_weights():
    """load_model reads SmolLM2 from a de-quantised copy of the GGUF (smollm2_checkpoint):
    the same logits as a load of the GGUF itself, and the head still tied."""
    gguf = models.smollm2_gguf_path()
    folder = models.smollm2_checkpoint()
    assert folder.parent.parent == models.cache_dir() and str(gguf.stat().st_size) in folder.name
    ref = models.loading._from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    model = load_model(models.SMOLLM2, device="cpu", dtype="float32")
    assert model.config.name_or_path == str(folder)
    ids = torch.tensor([[1, 2, 3, 400, 5000, 9000, 49151]])
    with torch.inference_mode():
        assert torch.equal(model(ids).logits, ref.eval()(ids).logits)
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()


def test_loading_a_model_prints_no_progress_bar_and_restores_the_setting(capsys):
    """A chapter's output must not depend on how its model was loaded."""
    from transformers.utils import logging

    logging.enable_progress_bar()
    load_model(models.QWEN2_SMOKE, device="cpu")  # from_pretrained on a local folder
    assert "Loading weights" not in capsys.readouterr().err
    assert logging.is_progress_bar_enabled()


def test_toy_qwen2_shapes_and_the_local_stand_in_for_a_hub_model(tmp_path, monkeypatch):
    """``qwen2-tiny-random`` is initialised in memory; ``qwen2-smoke`` holds the same seed-0
    weights in a folder and loads through ``from_pretrained``, as a hub name does."""
    monkeypatch.setenv("CADLIB_CACHE", str(tmp_path))
    tiny = load_model(models.QWEN2_TINY, device="cpu", seed=0)
    info = model_info(tiny)
    assert info["model_type"] == "qwen2" and info["num_hidden_layers"] == 2
    assert models.is_random_init(models.QWEN2_TINY)
    path = models.stand_in_path(models.QWEN2_SMOKE)
    assert path.parent.parent == tmp_path and (path / "config.json").exists()
    assert models.stand_in_path(models.QWEN2_SMOKE) == path  # written once
    smoke = load_model(models.QWEN2_SMOKE, device="cpu", dtype="bfloat16")
    assert next(smoke.parameters()).dtype == torch.bfloat16
    a, b = tiny.state_dict(), smoke.state_dict()
    assert all(torch.equal(a[k].to(torch.bfloat16), b[k]) for k in a)
    tok = models.load_tokenizer(models.QWEN2_SMOKE)
    assert len(tok) == info["vocab_size"] and tok.chat_template
    with pytest.raises(ValueError, match="unknown stand-in"):
        models.stand_in_path("qwen2-nothing")


def test_check_available_names_the_model_and_how_to_supply_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # an empty cache
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert models.check_available("qwen2.5-7b-random") == "random init"
    assert models.check_available(models.QWEN2_SMOKE) == "local stand-in"
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(models.ModelUnavailableError, match="no config.json"):
        models.check_available(str(folder))
    (folder / "config.json").write_text("{}")
    assert models.check_available(str(folder)) == "local folder"
    name = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    with pytest.raises(models.ModelUnavailableError) as err:
        models.check_available(name)
    message = str(err.value)
    assert "\n" not in message and name in message and "HF_HUB_OFFLINE" in message
    assert f"hf download {name}" in message and "local folder" in message
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen2.5-Coder-1.5B-Instruct"
    (snapshot / "snapshots" / "abc").mkdir(parents=True)
    (snapshot / "refs").mkdir()
    (snapshot / "refs" / "main").write_text("abc")
    (snapshot / "snapshots" / "abc" / "config.json").write_text("{}")
    assert models.check_available(name) == "hub cache"


# -- issue 36: checks before anything heavy loads -------------------------------------------------


def test_a_missing_gpu_is_refused_before_loading():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="device 'cuda'.*use --device cpu"):
        models.resolve_device("cuda")
    with pytest.raises(ValueError, match="unknown device 'tpu9'"):
        models.resolve_device("tpu9")


def test_offline_names_fail_at_once_in_one_line(tmp_path, monkeypatch):
    """HF_HUB_OFFLINE: no retries; one line that lists the names working offline."""
    import huggingface_hub.constants as hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert not models.hub_reachable()
    for load in (models.load_tokenizer, models.check_available):
        with pytest.raises(models.ModelUnavailableError) as err:
            load("no-such-org/no-such-model-xyz")
        message = str(err.value)
        assert "\n" not in message and "names that work offline" in message
        assert models.SMOLLM2 in message and "HF_HUB_OFFLINE" in message


def test_gguf_in_names_a_file_or_the_only_one_in_a_folder(tmp_path):
    assert models.gguf_in(tmp_path) is None and models.gguf_in("Qwen/Qwen2.5-7B") is None
    (tmp_path / "a.gguf").write_bytes(b"")
    assert models.gguf_in(tmp_path) == tmp_path / "a.gguf"
    assert models.gguf_in(tmp_path / "a.gguf") == tmp_path / "a.gguf"
    (tmp_path / "b.gguf").write_bytes(b"")
    with pytest.raises(ValueError, match="2 GGUF files .*a.gguf, b.gguf"):
        models.gguf_in(tmp_path)
    (tmp_path / "config.json").write_text("{}")  # a transformers folder: not a GGUF one
    assert models.gguf_in(tmp_path) is None
    assert models.check_available(str(tmp_path / "a.gguf")) == "local GGUF file"


def test_model_context_reads_configs_not_weights():
    assert models.model_context("tiny-random") == 4096
    assert models.model_context("qwen2.5-7b-random") == 32768


@pytest.mark.hf_model
def test_the_packaged_gguf_says_its_context():
    assert models.model_context(models.SMOLLM2) == 8192
    assert models.model_context(str(models.smollm2_gguf_path())) == 8192


def test_the_lazy_loading_names_are_loadings_own():
    """``cadlib.models`` imports its torch half on first use; its list of those names is
    ``loading.__all__``, so a name added there is importable from the package too."""
    import cadlib.models
    from cadlib.models import loading

    assert set(cadlib.models.LOADING_NAMES) == set(loading.__all__)
    assert cadlib.models.load_model is loading.load_model


def test_names_and_tokenizers_import_no_torch():
    """The registry and the tokenizers (what ``cad tokens`` and the CLI's checks need) import
    no torch: a fresh interpreter that imports them has not loaded it."""
    import subprocess
    import sys

    code = (
        "import sys, cadlib, cadlib.models; from cadlib.models import SMOLLM2, get_tokenizer; "
        "get_tokenizer('qwen2.5'); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
