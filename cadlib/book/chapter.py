"""How every chapter starts and ends: :func:`start` picks its parameters, :meth:`Chapter.write`
writes its results file.

Each notebook used to start its own way (``choose``, then a ``Recorder``, a clock, a tokenizer
or a setup function in various shapes) and write its results its own way (``write_results``
with ``profile`` passed beside the parameters that already hold it, or a chapter's writer with
its own argument order). One object now carries what a chapter's cells read from its first
code cell to its last::

    ch = chapter.start("losslessness", L.PROFILES, profile, seed=seed, device=device,
                       corpora=corpora)
    ch.P          # the chosen parameters (cadlib.book.params.choose), ch.P["profile"] included
    ch.rec        # the chapter's Recorder (record=True), else None
    ...
    path = ch.write(numbers, paper.LOSSLESSNESS, model=None, tokenizer=tok.name)

The results file is the one :func:`cadlib.book.results.write_results` writes, with the
chapter's parameters as its ``params`` (plus any ``extra_params`` a chapter also records).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from . import params as _params
from .replay import Recorder
from .results import CHAPTER_NOTEBOOKS, write_results

__all__ = ["Chapter", "start"]


@dataclasses.dataclass
class Chapter:
    """One run of a chapter: its results name (``"kernel"``, a key of
    :data:`cadlib.book.results.CHAPTER_NOTEBOOKS`), its parameters ``P``, the notebook's
    ``seed`` and ``device`` as given, its :class:`~cadlib.book.replay.Recorder` (``None`` for
    a chapter that records nothing) and the ``time.perf_counter()`` it started at."""

    name: str
    P: dict
    seed: int
    device: str
    rec: Recorder | None
    started: float

    @property
    def profile(self) -> str:
        """The profile this run is at (``P["profile"]``)."""
        return self.P["profile"]

    def elapsed(self) -> float:
        """Seconds since :func:`start` (for runtime lines and ``runtime_s``)."""
        return time.perf_counter() - self.started

    def write(self, numbers: dict, paper: dict | None = None, *, model: str | None,
              tokenizer: str | None, device: str | None = None,
              extra_params: Mapping | None = None) -> Path:  # fmt: skip
        """Write the chapter's results file (:func:`cadlib.book.results.write_results` at this
        run's profile, ``params`` = :attr:`P` updated with ``extra_params``) and return its path.

        ``device``: the device the numbers were measured on (labels a GPU in ``hardware``);
        ``None`` where no model ran."""
        params = {**self.P, **(extra_params or {})}
        return write_results(self.name, numbers, paper, profile=self.profile, model=model,
                             tokenizer=tokenizer, params=params, device=device)  # fmt: skip


def start(name: str, profiles: Mapping[str, Mapping], profile: str, *, seed: int = 0,
          device: str = "auto", record: bool = False, resume: bool = False,
          choose: Callable[..., dict] | None = None, **overrides) -> Chapter:  # fmt: skip
    """Start chapter ``name`` at ``profile``: its parameters (``profiles[profile]`` with every
    non-``None`` override, :func:`cadlib.book.params.choose`, which also rejects an unknown
    profile, parameter or mistyped papermill ``-p`` name), and, with ``record``, its
    :class:`~cadlib.book.replay.Recorder` (``resume``: records already written are read back).

    ``choose``: a chapter's own chooser, called as ``choose(profile, **overrides)``, where the
    chapter normalizes overrides or checks values beyond ``params.choose`` (chapter 7's
    ``sft.choose_params``); it must choose from the same ``profiles``.
    """
    started = time.perf_counter()
    _params.check_choice("chapter", name, CHAPTER_NOTEBOOKS)
    if choose is None:
        P = _params.choose(profiles, profile, **overrides)
    else:
        _params.check_choice("profile", profile, profiles)
        P = choose(profile, **overrides)
    rec = Recorder(name, profile, resume=resume) if record else None
    return Chapter(name=name, P=P, seed=seed, device=device, rec=rec, started=started)
