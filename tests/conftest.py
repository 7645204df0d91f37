"""Shared fixtures: the local HumanEvalPack mirror (when one is configured), one torch thread,
SmolLM2's tokenizer and the tiny random model that speaks it."""

import os

import pytest

from cadlib.corpora import HUMANEVALPACK_ENV


@pytest.fixture(scope="session")
def humanevalpack_dir():
    folder = os.environ.get(HUMANEVALPACK_ENV)
    if not folder or not os.path.isdir(folder):
        pytest.skip(f"{HUMANEVALPACK_ENV} is not set to a HumanEvalPack folder")
    return folder


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module: on a 2-core machine shared with other jobs, two contended
    threads make the tiny model's forwards ~10-100x slower (behaviour does not depend on it)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tok():
    """SmolLM2-135M-Instruct's tokenizer (the ``tiny-random`` model's too)."""
    from cadlib.models import load_tokenizer

    return load_tokenizer("smollm2-135m-instruct")


@pytest.fixture(scope="module")
def model():
    """The ``tiny-random`` causal LM (SmolLM2's vocabulary), fp32 on CPU."""
    from cadlib.models import load_model

    return load_model("tiny-random", device="cpu", dtype="float32")
