"""The differential check at scale: random cuts of the Python standard library vs ``ast.parse``.

Chapter 8's first check (:func:`cadlib.fim.differential_check`) cuts HumanEval solutions, which
the book picked. This one cuts code nobody picked for it: the top-level modules of the standard
library of the interpreter that runs it (``sysconfig.get_paths()["stdlib"]``, ``*.py`` directly
in that folder, the ones CPython itself parses; :func:`stdlib_sources`). Each cut
(:func:`stdlib_cuts`, seeded):

* draws a module, then a split ``a ≤ b`` of it with :func:`cadlib.fim.differential.fim_splits`
  (the kind of each cut drawn uniformly among *boundary*, *mid-token*, *mid-string* and
  *mid-indentation*; middles up to ``max_middle`` characters);
* widens ``source[a:b]`` to a window of whole top-level statements ``source[s:e]`` (the left
  context starts, and the right context ends, at a module-level statement), the widest within
  ``max_left`` / ``max_right`` characters of the cut, or the statement around the cut when it is
  longer (so a cut inside a large class keeps the whole class): the window is itself a module,
  checked with ``ast.parse`` (windows over ``max_window`` characters are redrawn), and the FIM
  problem is ``left = source[s:a]``,
  ``middle = source[a:b]``, ``right = source[b:e]``.

:func:`stdlib_differential` then checks, per cut, that every prefix of the true middle is
viable and that it can end, and compares ``can_end()`` with ``ast.parse`` on ``n_edits``
perturbed middles (:func:`cadlib.fim.differential.random_edit`). Every disagreement is placed
by *where the edit is* in the valid program (:func:`cadlib.fim.disagreements.edit_location`:
inside an f-string's replacement field or elsewhere) and gets a category by what is at that
place (:func:`cadlib.fim.disagreements.categorize`: one of
:data:`cadlib.fim.differential.KNOWN_DIFFERENCES`, else ``"uncategorized"``); a false
rejection (valid code blocked) or an uncategorized disagreement is a *failure*
(:func:`stdlib_summary`). The same check runs on a second codebase the grammar was not
developed against (:func:`package_folder`: the ``*.py`` files of an installed package's folder).

Each row also times the constraint's construction (the right context's quotient grammar, then
feeding the left context) and the feeding of the true middle, for the cost plots
(:func:`build_cost_sweep` adds whole-module left contexts).

The stdlib differs between patch releases of 3.11, so :func:`manifest` records the interpreter
version, the file list and a hash of their contents; the chapter's cpu profile compares only
counts that do not depend on them (the number of cuts and the number of uncategorized
disagreements), and the ``full`` run is committed as ``results/fim.full.json`` by chapter 8's
``python -m cadlib.chapters.fim_constraint.commands stdlib`` (:func:`codebase` names what was
cut). How chapter 8 shows the runs (their Markdown, the committed runs side by side, the cost
figure) is its own (``text_stdlib``, ``show_stdlib``): this module is the check, not its
presentation, and no command.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import importlib.metadata
import importlib.util
import multiprocessing
import platform
import random
import sysconfig
import time
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from cadlib.metrics import wilson_ci

from .constraint import FIMConstraint, UnconnectableContextError, _Problem
from .differential import cut_kinds, fim_splits, python_accepts, random_edit
from .disagreements import categorize, edit_location, edit_span

__all__ = [
    "stdlib_sources",
    "package_folder",
    "manifest",
    "stdlib_cuts",
    "stdlib_differential",
    "stdlib_summary",
    "build_cost_sweep",
    "codebase",
]


def stdlib_sources(folder: str | None = None, max_chars: int | None = None) -> dict[str, str]:
    """``{file name: source}`` of the ``*.py`` files directly in the standard library folder
    (default: this interpreter's) that ``ast.parse`` accepts, sorted by name; ``max_chars``
    drops larger files."""
    root = Path(folder or sysconfig.get_paths()["stdlib"])
    if not root.is_dir():
        raise FileNotFoundError(f"no standard library folder at {root}")
    out = {}
    for path in sorted(root.glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if (max_chars is None or len(text) <= max_chars) and python_accepts(text):
            out[path.name] = text
    if not out:
        raise FileNotFoundError(f"no parseable *.py file in {root}")
    return out


def package_folder(package: str) -> Path:
    """The folder of an installed package or subpackage (``"pandas.core"``): a second
    codebase for the differential, written by others than the grammar's authors."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"no installed package {package!r} with a folder")
    return Path(list(spec.submodule_search_locations)[0])


def manifest(sources: dict[str, str]) -> dict:
    """Interpreter version, the file names and one SHA-256 over names and contents."""
    digest = hashlib.sha256()
    for name, text in sources.items():
        digest.update(name.encode() + b"\0" + hashlib.sha256(text.encode()).digest())
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "files": len(sources),
        "chars": sum(map(len, sources.values())),
        "sha256": digest.hexdigest(),
        "names": list(sources),
    }


#: Cuts :func:`stdlib_cuts` redrew in its last call, by reason.
LAST_REDRAWS = {"window": 0, "not a module": 0}


def _boundaries(source: str) -> list[int]:
    """Offsets where a module-level statement starts (decorators included), and the end."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = {0, len(source)}
    for node in ast.parse(source).body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        out.add(starts[first - 1])
    return sorted(out)


def _window(bounds: list[int], a: int, b: int, max_left: int, max_right: int) -> tuple:
    """``(s, e)``: statement boundaries around ``[a, b]`` (see the module docstring)."""
    i = bisect.bisect_right(bounds, a) - 1  # bounds[i] <= a
    s = bounds[i]
    while i > 0 and a - bounds[i - 1] <= max_left:
        i -= 1
        s = bounds[i]
    j = bisect.bisect_left(bounds, b)  # bounds[j] >= b
    e = bounds[j]
    while j + 1 < len(bounds) and bounds[j + 1] - b <= max_right:
        j += 1
        e = bounds[j]
    return s, e


def stdlib_cuts(
    sources: dict[str, str],
    n: int,
    seed: int = 0,
    max_middle: int = 300,
    max_left: int = 1500,
    max_right: int = 1500,
    max_window: int | None = 5000,
) -> list[dict]:
    """``n`` seeded cuts (dicts: ``file, a, b, left_cut, right_cut, left, middle, right``;
    offsets in the file) over ``sources`` (see the module docstring). A cut whose window is
    longer than ``max_window`` characters (inside a large class: the whole class) is redrawn,
    to bound the run's time; :data:`LAST_REDRAWS` counts them (long contexts are measured by
    :func:`build_cost_sweep`)."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    rng = random.Random(f"stdlib:{seed}")
    LAST_REDRAWS.update({"window": 0, "not a module": 0})
    names = list(sources)
    cache: dict = {}
    out = []
    while len(out) < n:
        name = rng.choice(names)
        src = sources[name]
        if name not in cache:
            cache[name] = (_boundaries(src), cut_kinds(src))
        bounds, kinds = cache[name]
        a, b, _, _ = fim_splits(src, 1, rng, max_middle, kinds=kinds)[0]
        s, e = _window(bounds, a, b, max_left, max_right)
        if max_window is not None and e - s > max_window:
            LAST_REDRAWS["window"] += 1
            continue
        if not python_accepts(src[s:e]):  # e.g. a __future__ import after the window's start
            LAST_REDRAWS["not a module"] += 1
            continue
        out.append(
            dict(
                file=name,
                a=a,
                b=b,
                left_cut=kinds[a],
                right_cut=kinds[b],
                left=src[s:a],
                middle=src[a:b],
                right=src[b:e],
            )
        )
    return out


def _timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def _row(base: dict, program: str, span: tuple, **fields) -> dict:
    """One check's row; a disagreement is placed and categorized at ``span`` of the valid
    ``program``."""
    agree = fields["truth"] == fields["ours"]
    where = category = ""
    if not agree:
        where = edit_location(program, *span)
        category = categorize(program, *span, fields.get("edit", ""))
    return dict(base, **fields, agree=agree, where=where, category=category)


def _check_cut(cut: dict, n_edits: int, rng: random.Random) -> list[dict]:
    left, middle, right = cut["left"], cut["middle"], cut["right"]
    program = left + middle + right
    whole = (len(left), len(left) + len(middle))
    base = {k: cut[k] for k in ("file", "a", "b", "left_cut", "right_cut")}
    base.update(left_chars=len(left), middle_chars=len(middle), right_chars=len(right))
    try:
        build_s, c = _timed(lambda: FIMConstraint(left, right))
    except UnconnectableContextError:
        return [
            _row(
                base,
                program,
                whole,
                check="true_middle",
                edit="",
                truth=True,
                ours=False,
                viable=False,
                build_s=None,
                feed_s=None,
            )
        ]
    states = [c.branches]
    t0 = time.perf_counter()
    for ch in middle:
        if not c.feed(ch):
            break
        states.append(c.branches)
    feed_s = time.perf_counter() - t0
    viable = len(states) == len(middle) + 1
    rows = [
        _row(
            base,
            program,
            whole,
            check="true_middle",
            edit="",
            truth=True,
            ours=viable and c.can_end(),
            viable=viable,
            build_s=build_s,
            feed_s=feed_s,
        )
    ]
    if not viable:
        return rows
    for _ in range(n_edits):
        i, edited, what = random_edit(middle, rng)
        trial = c.fork()
        trial.branches = list(states[i])
        trial.feed(edited[i:])
        edited_program = left + edited + right
        lo, hi = edit_span(middle, edited, i)
        rows.append(
            _row(
                base,
                program,
                (len(left) + lo, len(left) + hi),
                check="edit",
                edit=what,
                truth=python_accepts(edited_program),
                ours=trial.can_end(),
                viable=None,
                build_s=None,
                feed_s=None,
            )
        )
    return rows


def _check_indexed(job: tuple) -> list[dict]:
    index, cut, n_edits, seed = job
    return _check_cut(cut, n_edits, random.Random(f"stdlib-edits:{seed}:{index}"))


def stdlib_differential(
    cuts: list[dict], n_edits: int = 4, seed: int = 0, progress: bool = True, jobs: int = 1
) -> pd.DataFrame:
    """Check every cut of :func:`stdlib_cuts` (see the module docstring); each cut's edits
    draw from their own seeded generator, so ``jobs`` worker processes give the same rows.

    Returns
    -------
    pandas.DataFrame
        One row per check: ``file, a, b, left_cut, right_cut, left_chars, middle_chars,
        right_chars, check`` (``"true_middle"`` / ``"edit"``), ``edit``, ``truth``
        (``ast.parse``), ``ours`` (``can_end``), ``viable`` (true middles: every prefix),
        ``build_s`` and ``feed_s`` (true middles: seconds to build the constraint and to feed
        the middle), ``agree``, ``where`` (disagreements only,
        :func:`~cadlib.fim.disagreements.edit_location`) and ``category`` (disagreements
        only, :func:`~cadlib.fim.disagreements.categorize`).
    """
    work = [(k, cut, n_edits, seed) for k, cut in enumerate(cuts)]
    bar = dict(total=len(work), desc="stdlib differential", disable=not progress)
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            done = list(tqdm(pool.imap(_check_indexed, work, chunksize=4), **bar))
    else:
        done = [_check_indexed(job) for job in tqdm(work, **bar)]
    return pd.DataFrame([row for rows in done for row in rows])


def stdlib_summary(frame: pd.DataFrame) -> dict:
    """Counts of a :func:`stdlib_differential` frame, each rate with its Wilson interval.

    ``failures``: disagreements no known difference explains, i.e. false rejections (valid
    code the constraint blocks, whatever its category) and uncategorized false accepts."""
    true_mid = frame[frame.check == "true_middle"]
    edits = frame[frame.check == "edit"]
    wrong = frame[~frame.agree]

    def rate(k: int, n: int) -> dict:
        lo, hi = wilson_ci(k, n)
        return {"k": int(k), "n": int(n), "rate": k / n if n else None, "ci95": [lo, hi]}

    return {
        "cuts": int(len(true_mid)),
        "files_cut": int(true_mid.file.nunique()),
        "cuts_by_kind": {
            f"{a} | {b}": int(v)
            for (a, b), v in true_mid.groupby(["left_cut", "right_cut"]).size().items()
        },
        "true_middles_viable": rate(int(true_mid.viable.sum()), len(true_mid)),
        "true_middles_accepted": rate(int(true_mid.ours.sum()), len(true_mid)),
        "edits": int(len(edits)),
        "edits_valid": rate(int(edits.truth.sum()), len(edits)),
        "edit_agreement": rate(int(edits.agree.sum()), len(edits)),
        "disagreements": int(len(wrong)),
        "disagreements_by_category": {
            k: int(v) for k, v in wrong.category.value_counts().sort_index().items()
        },
        "disagreements_by_where": {
            k: int(v) for k, v in wrong["where"].value_counts().sort_index().items()
        },
        "false_rejections": int((wrong.truth & ~wrong.ours.astype(bool)).sum()),
        "uncategorized": int((wrong.category == "uncategorized").sum()),
        "failures": int(((wrong.category == "uncategorized") | wrong.truth).sum()),
    }


def build_cost_sweep(
    sources: dict[str, str],
    lengths=(1000, 2000, 5000, 10000, 20000, 40000),
    n_files: int = 3,
    max_right: int = 2000,
) -> pd.DataFrame:
    """Construction cost against left-context length, up to whole modules: in the ``n_files``
    largest sources, the left context is the module up to the top-level statement boundary
    nearest each length whose next statement (the right context) is at most ``max_right``
    characters. Rows: ``file, left_chars, right_chars, right_s`` (the right context's quotient
    grammar), ``left_s`` (feeding the left context) and ``build_s`` (both)."""
    big = sorted(sources, key=lambda k: -len(sources[k]))[:n_files]
    rows = []
    for name in big:
        src = sources[name]
        bounds = _boundaries(src)
        spans = [(a, e) for a, e in zip(bounds, bounds[1:], strict=False) if 0 < e - a <= max_right]
        for length in lengths:
            if length >= len(src) or not spans:
                continue
            a, e = min(spans, key=lambda span, n=length: abs(span[0] - n))
            left, right = src[:a], src[a:e]
            try:
                right_s, problem = _timed(lambda r=right: _Problem("", r))
            except UnconnectableContextError:
                continue
            left_s, _ = _timed(lambda p=problem, x=left: p.lexer.feed(p.lexer.initial(), x))
            rows.append(
                dict(
                    file=name,
                    target=length,
                    left_chars=len(left),
                    right_chars=len(right),
                    right_s=right_s,
                    left_s=left_s,
                    build_s=right_s + left_s,
                )
            )
    return pd.DataFrame(rows)


def codebase(package: str | None) -> str:
    """What was cut: the standard library, or ``package`` with its distribution's version."""
    if package is None:
        return f"Python {platform.python_version()} standard library"
    top = package.split(".")[0]
    return f"{package} ({top} {importlib.metadata.version(top)})"
