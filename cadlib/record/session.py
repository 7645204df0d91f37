"""How every chapter starts and ends: :func:`start` picks its parameters, :meth:`Chapter.write`
writes its results file.

Each notebook used to start its own way (``choose``, then a ``Recorder``, a clock, a tokenizer
or a setup function in various shapes) and write its results its own way (``write_results``
with ``profile`` passed beside the parameters that already hold it, or a chapter's writer with
its own argument order). One object now carries what a chapter's cells read from its first
code cell to its last::

    ch = session.start(losslessness.CARD, losslessness.profiles.PROFILES, globals())
    ch.P          # the chosen parameters (cadlib.record.params.choose), ch.P["profile"] included
    ch.rec        # the chapter's Recorder (its card records), else None
    ...
    path = ch.write(numbers, paper.LOSSLESSNESS, model=None, tokenizer=tok.name)

The results file is the one :func:`cadlib.record.results.write_results` writes, with the
chapter's parameters as its ``params`` (plus any ``extra_params`` a chapter also records).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from . import params as _params
from .card import Card
from .replay import Recorder
from .results import write_cases, write_results

__all__ = ["Chapter", "start"]


@dataclasses.dataclass
class Chapter:
    """One run of a chapter: its results name (``"kernel"``, a key of
    :class:`~cadlib.record.card.Card`'s ``name``), its parameters ``P``, the notebook's
    ``seed`` and ``device`` as given, its :class:`~cadlib.record.replay.Recorder` (``None`` for
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

    def write(
        self,
        numbers: dict,
        paper: dict | None = None,
        *,
        model: str | None,
        tokenizer: str | None,
        device: str | None = None,
        extra_params: Mapping | None = None,
    ) -> Path:
        """Write the chapter's results file (:func:`cadlib.record.results.write_results` at this
        run's profile, ``params`` = :attr:`P` updated with ``extra_params``) and return its path.

        ``device``: the device the numbers were measured on (labels a GPU in ``hardware``);
        ``None`` where no model ran."""
        params = {**self.P, **(extra_params or {})}
        return write_results(
            self.name,
            numbers,
            paper,
            profile=self.profile,
            model=model,
            tokenizer=tokenizer,
            params=params,
            device=device,
        )

    def write_cases(self, records: Iterable[Mapping]) -> Path:
        """Write this run's per-case records beside its results file
        (:func:`cadlib.record.results.write_cases`: ``<name>[.<profile>].cases.jsonl``)."""
        return write_cases(self.name, records, self.profile)


#: Names of a parameters cell that every chapter may have and :func:`start` reads itself; every
#: other name it reads is a key of the chapter's profiles.
RUN_NAMES = ("profile", "seed", "device", "resume")


def start(
    card: Card,
    profiles: Mapping[str, Mapping],
    namespace: Mapping,
    *,
    choose: Callable[..., dict] | None = None,
) -> Chapter:
    """Start the chapter of ``card`` from its notebook's parameters cell: ``namespace`` is the
    notebook's ``globals()``, whose ``profile``, ``seed``, ``device`` and ``resume``
    (:data:`RUN_NAMES`) start the run and whose names that are keys of ``profiles`` override
    the profile's values where they are not ``None`` (:func:`cadlib.record.params.choose`,
    which also rejects an unknown profile or a mistyped papermill ``-p`` name). Only values a
    parameters cell can hold are read (literals: ``None``, numbers, strings and containers of
    them), so a cell re-run in a live kernel never passes a loaded model in as ``model``. A
    chapter whose card ``records`` gets its :class:`~cadlib.record.replay.Recorder`
    (``resume``: records already written are read back).

    ``choose``: a chapter's own chooser, called as ``choose(profile, **overrides)``, where the
    chapter normalizes overrides or checks values beyond ``params.choose`` (chapter 7's);
    it must choose from the same ``profiles``.
    """
    started = time.perf_counter()
    keys = set().union(*(set(p) for p in profiles.values())) - set(RUN_NAMES)
    overrides = {k: v for k, v in namespace.items() if k in keys and _is_parameter(v)}
    profile = namespace["profile"]
    if choose is None:
        P = _params.choose(profiles, profile, **overrides)
    else:
        _params.check_choice("profile", profile, profiles)
        P = choose(profile, **overrides)
    resume = bool(namespace.get("resume", False))
    rec = Recorder(card.name, profile, resume=resume) if card.records else None
    return Chapter(
        name=card.name,
        P=P,
        seed=namespace.get("seed", 0),
        device=namespace.get("device", "auto"),
        rec=rec,
        started=started,
    )


def _is_parameter(value) -> bool:
    """Whether ``value`` is what a papermill parameters cell can assign: a literal."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return all(_is_parameter(v) for v in value)
    if isinstance(value, dict):
        return all(_is_parameter(k) and _is_parameter(v) for k, v in value.items())
    return False
