"""Measure once, replay always: a chapter's timed measurements, recorded with the run that
made them and read back by the test suite instead of being re-measured.

A timed chapter wraps each measurement (a timing loop, a forward-cost grid, a free run of the
model) in :func:`measured`. Run normally, it measures and writes what it measured to
``<results dir>/records/<stem>/<name>.json`` (``<stem>`` is the chapter's results name without
``.json``: ``decoding``, ``decoding.full``, ...), beside the results file of the same run.
With ``$CADLIB_REPLAY`` set (the Makefile's nbval queues set it to 1), it measures nothing and
returns the committed record from ``<repo>/results/records/`` instead (or from the folder
``$CADLIB_REPLAY`` names), so CI re-derives everything computed *from* the measurements
(tables, ratios, the cost model's validation, the goals, the prose) and compares it with the
committed outputs, without re-timing runs whose times it could never compare exactly.
What CI re-derives and what it replays is listed on the reproduce page.

Records are plain JSON with tags (:func:`encode` / :func:`decode`): a dataclass is written
under a short stable tag (``"ForwardRecord"``, ``"CaseResult"``) that :data:`RECORD_TAGS` maps
to where the class lives now, so moving a class changes one line of that table, never the
committed records; DataFrames are written column by column with their dtypes, beside numpy
arrays and scalars and tuples; floats round-trip exactly (``repr``). A record missing under
replay is an error that names the command that records it, never a silent re-measurement.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd

from cadlib.paths import repo_root

from .provenance import evidence_caption
from .results import load_committed, results_dir, results_name

__all__ = [
    "RECORD_TAGS",
    "REPLAY_ENV",
    "Recorder",
    "decode",
    "encode",
    "measured",
    "record_class",
    "record_path",
    "replaying",
    "replayed_run_note",
    "run_caption",
    "with_record",
]

T = TypeVar("T")

#: Set to 1 to replay the committed records (``<repo>/results/records``), or to a folder
#: holding ``records/``-style subfolders, instead of measuring.
REPLAY_ENV = "CADLIB_REPLAY"
_TYPE = "__type__"

#: The dataclasses a record may hold: ``{tag: "module:qualname"}``. A record names a dataclass
#: by its tag only, so a class that moves changes its line here and no committed record; a
#: dataclass that is not listed cannot be recorded. Tags never change (committed records name
#: them) and must differ from the built-in kinds (``tuple``, ``ndarray``, ``dict``,
#: ``DataFrame``).
RECORD_TAGS = {
    "Copy": "cadlib.grammar:Copy",
    "Gen": "cadlib.grammar:Gen",
    "Program": "cadlib.grammar:Program",
    "Transcript": "cadlib.decoding.fsm:Transcript",
    "ForwardRecord": "cadlib.decoding.decoder:ForwardRecord",
    "Trace": "cadlib.decoding.decoder:Trace",
    "DecodeResult": "cadlib.decoding.decoder:DecodeResult",
    "CaseResult": "cadlib.chapters.sft_pilot.run_scoring:CaseResult",
    "TrainRun": "cadlib.chapters.sft_pilot.run_training:TrainRun",
    "Pilot": "cadlib.chapters.sft_pilot.run_pilot:Pilot",
    "PilotRun": "cadlib.chapters.sft_pilot.run_pilot:PilotRun",
}
_TAG_OF = {path: tag for tag, path in RECORD_TAGS.items()}


def replaying() -> bool:
    """Whether :func:`measured` replays records instead of measuring (``$CADLIB_REPLAY``)."""
    return os.environ.get(REPLAY_ENV, "") not in ("", "0")


def _records_root(replay: bool) -> Path:
    if not replay:
        return results_dir() / "records"
    source = os.environ.get(REPLAY_ENV, "1")
    return Path(source) if source != "1" else repo_root() / "results" / "records"


def record_path(chapter: str, profile: str, name: str, replay: bool | None = None) -> Path:
    """The record file of measurement ``name`` of ``chapter`` (its results name, e.g.
    ``"decoding"``) at ``profile``: written under :func:`cadlib.record.results.results_dir`, read
    under replay from the committed records."""
    replay = replaying() if replay is None else replay
    stem = results_name(chapter, profile).removesuffix(".json")
    return _records_root(replay) / stem / f"{name}.json"


def measured(
    chapter: str, profile: str, name: str, measure: Callable[[], T], resume: bool = False
) -> T:
    """``measure()``, written to its record (:func:`record_path`); under replay
    (:func:`replaying`), the committed record instead, without calling ``measure``.

    ``resume``: a record this run would write that already exists is read back instead of
    measured again, so a long evidence run stopped part-way continues where it stopped (opt-in:
    a plain re-run re-measures, or a changed code path would be hidden behind an old record)."""
    if resume and not replaying():
        path = record_path(chapter, profile, name, replay=False)
        if path.exists():
            return decode(json.loads(path.read_text()))
    if replaying():
        path = record_path(chapter, profile, name, replay=True)
        if not path.exists():
            raise FileNotFoundError(
                f"no record {path} to replay: record it by running the chapter at profile "
                f"{profile!r} without ${REPLAY_ENV} (make record, or papermill)"
            )
        return decode(json.loads(path.read_text()))
    value = measure()
    path = record_path(chapter, profile, name, replay=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(encode(value), separators=(",", ":")) + "\n")
    return value


def encode(value):
    """``value`` as JSON-ready data that :func:`decode` turns back into an equal value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return {_TYPE: "ndarray", "dtype": str(value.dtype), "items": encode(value.tolist())}
    if isinstance(value, (list, tuple)):
        items = [encode(v) for v in value]
        return items if isinstance(value, list) else {_TYPE: "tuple", "items": items}
    if isinstance(value, dict):
        return {_TYPE: "dict", "items": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, pd.DataFrame):
        return _encode_frame(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        path = f"{type(value).__module__}:{type(value).__qualname__}"
        if path not in _TAG_OF:
            raise TypeError(f"cannot record {path}: register a tag for it in replay.RECORD_TAGS")
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {_TYPE: _TAG_OF[path], "fields": fields}
    raise TypeError(f"cannot record a {type(value).__name__}")


def _encode_frame(df: pd.DataFrame) -> dict:
    if not isinstance(df.index, pd.RangeIndex) or df.index.start != 0 or df.index.step != 1:
        raise TypeError("record a DataFrame with a default index (reset_index() first)")
    columns = [str(c) for c in df.columns]
    if len(set(columns)) != len(columns) or columns != list(df.columns):
        raise TypeError("record a DataFrame with unique string column names")
    return {
        _TYPE: "DataFrame",
        "dtypes": [str(t) for t in df.dtypes],
        "columns": columns,
        "data": [[encode(v) for v in df[c].tolist()] for c in columns],
    }


def decode(data):
    """The value :func:`encode` made ``data`` from."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    kind = data[_TYPE]
    if kind == "tuple":
        return tuple(decode(v) for v in data["items"])
    if kind == "ndarray":
        return np.array(decode(data["items"]), dtype=data["dtype"])
    if kind == "dict":
        return {_hashable(decode(k)): decode(v) for k, v in data["items"]}
    if kind == "DataFrame":
        frame = pd.DataFrame(
            {
                c: [decode(v) for v in col]
                for c, col in zip(data["columns"], data["data"], strict=True)
            },
            columns=data["columns"],
        )
        return frame.astype(dict(zip(data["columns"], data["dtypes"], strict=True)))
    return _decode_dataclass(kind, data["fields"])


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def _decode_dataclass(tag: str, fields: dict):
    cls = record_class(tag)
    return cls(**{name: decode(v) for name, v in fields.items()})


def record_class(tag: str) -> type:
    """The dataclass a record's ``tag`` names, through :data:`RECORD_TAGS` (imported on first
    use, so replaying a record that holds no chapter class imports no chapter)."""
    if tag not in RECORD_TAGS:
        raise ValueError(f"a record names {tag!r}, which is not a tag of replay.RECORD_TAGS")
    module, _, qualname = RECORD_TAGS[tag].partition(":")
    cls = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    return cls


class Recorder:
    """The measurements of one run of a chapter at one profile: ``rec(name, measure)`` is
    :func:`measured` for that chapter and profile (``resume``: records already written are
    read back, not re-measured); ``None`` in a library call means "measure, record nothing"
    (unit tests)."""

    def __init__(self, chapter: str, profile: str, resume: bool = False):
        self.chapter, self.profile, self.resume = chapter, profile, resume

    def __call__(self, name: str, measure: Callable[[], T]) -> T:
        return measured(self.chapter, self.profile, name, measure, resume=self.resume)

    def describe(self) -> str:
        """One line: whether this run measures or replays, and where its records are."""
        path = record_path(self.chapter, self.profile, "", replay=replaying()).parent
        verb = "replaying the committed records in" if replaying() else "recording to"
        if self.resume and not replaying():
            verb = "resuming from (records already there are read back) and recording to"
        return f"timed measurements: {verb} {_shown(path)}"


def with_record(record: Recorder | None, name: str, measure: Callable[[], T]) -> T:
    """``record(name, measure)``, or ``measure()`` when there is no recorder."""
    return measure() if record is None else record(name, measure)


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(repo_root()))
    except ValueError:
        return str(path)


def run_caption(chapter: str, profile: str) -> str:
    """The provenance line of the run a chapter's page shows (profile, date, commit, the load
    while it ran: :func:`cadlib.record.provenance.evidence_caption`), called after the chapter
    wrote its results: under replay the committed run's, whose measurements the page replays
    (:func:`cadlib.record.results.load_committed`); otherwise the run that just wrote
    ``results_dir()/<chapter>[.<profile>].json``."""
    name = results_name(chapter, profile)
    if replaying():
        record = load_committed(chapter, profile)
        if record is None:
            raise FileNotFoundError(f"no committed results/{name} to replay")
    else:
        record = json.loads((results_dir() / name).read_text())
    return evidence_caption(record, name)


def replayed_run_note(chapter: str, profile: str, command: str) -> str:
    """The sentence a chapter shows where it is itself its evidence run: its measurements are
    read back from the run's records (:func:`record_path`'s folder), which CI replays, and
    ``command`` recorded them."""
    folder = _shown(record_path(chapter, profile, "", replay=True).parent)
    return (
        f"This chapter is the `{profile}` run: every measurement above is read back from "
        f"its records (`{folder}/`), which CI replays; it was recorded by `{command}`."
    )
