"""Shared fixtures: the local HumanEvalPack mirror, when one is configured."""

import os

import pytest

from cadlib.corpora import HUMANEVALPACK_ENV


@pytest.fixture(scope="session")
def humanevalpack_dir():
    folder = os.environ.get(HUMANEVALPACK_ENV)
    if not folder or not os.path.isdir(folder):
        pytest.skip(f"{HUMANEVALPACK_ENV} is not set to a HumanEvalPack folder")
    return folder
