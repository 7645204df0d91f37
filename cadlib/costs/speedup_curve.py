"""The speedup curve ``s(N)``: load it, interpolate it log-linearly, label it (paper §4.1-4.2).

``s(N) = T_AR(N) / T_PP(N)`` is measured by :mod:`cadlib.chapters.kernel` at a few span lengths
``N`` (the paper's :data:`N_GRID`, or its first points); every bound of the ceiling and decoding
chapters (``bnd_m8``, ``bnd_exact``, ...) reads it between those points. This module is the
one home of that reading:

* :func:`load_curve` — one curve from a kernel results file (a measured model or the
  paper's published points) **(API)**;
* :func:`interpolate_loglinear` — ``s`` linear in ``log N`` between measured points, the
  end values outside them (no extrapolation), as the paper's ``bnd_exact`` (Table 2);
  :func:`speedup_at` is the same on a ``(N, s[, meta])`` tuple or ``{"N", "s"}`` dict
  **(API)**;
* :func:`curve_label` — the one-line label (model, weights, dtype, attention, hardware, P,
  t) every figure and bound derived from a curve carries.

:func:`check_curve` is the single validation: increasing span lengths ``N >= 1`` and finite
positive speedups.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from cadlib.record.results import load_results

__all__ = [
    "N_GRID",
    "check_curve",
    "interpolate_loglinear",
    "speedup_at",
    "load_curve",
    "curve_label",
]

#: Span lengths of the paper's sweep (Table 1): 10 points, 1 ... 512.
N_GRID = tuple(2**k for k in range(10))


def check_curve(N: Sequence[float], s: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """``(N, s)`` as float arrays, after checking they make a curve: equal-length 1-D, ``N``
    increasing span lengths ``>= 1``, ``s`` positive and finite; else ``ValueError``."""
    N, s = np.asarray(N, dtype=float), np.asarray(s, dtype=float)
    if N.ndim != 1 or N.shape != s.shape or N.size == 0:
        raise ValueError(f"a curve needs equal-length 1-D N and s, got {N.shape} and {s.shape}")
    if (N < 1).any() or (np.diff(N) <= 0).any():
        raise ValueError(f"curve N must be increasing positive span lengths, got {N.tolist()}")
    if not np.isfinite(s).all() or (s <= 0).any():
        raise ValueError(f"curve s must be positive and finite, got {s.tolist()}")
    return N, s


def interpolate_loglinear(
    N: Sequence[float], s: Sequence[float], n, *, clamp_nonpositive: bool = False
) -> np.ndarray:
    """``s(n)`` from measured points ``(N, s)``: linear in ``log N`` between points, the end
    values outside them (no extrapolation beyond what was measured).

    At a measured ``N`` it returns the measured value exactly. ``n`` must be positive and
    finite, unless ``clamp_nonpositive``: then ``n <= 0`` reads ``s(N_min)`` (the ceiling
    chapter's convention: its covers may hold zero-token spans).
    Returns an array of ``n``'s shape (0-d for a scalar).
    """
    N, s = check_curve(N, s)
    if clamp_nonpositive:
        x = np.maximum(np.asarray(n, dtype=float), 1e-12)
    else:
        x = np.asarray(n, dtype=float)
        if not np.isfinite(x).all() or (x <= 0).any():
            raise ValueError(f"span lengths must be positive and finite, got {n!r}")
    return np.interp(np.log(x), np.log(N), s)


def speedup_at(curve, n):
    """``s(n)`` by log-linear interpolation of a measured curve, as the paper's ``bnd_exact``
    (Table 2). **(API)**

    ``s`` is interpolated linearly in ``log N`` between the two measured span lengths around
    ``n``; at a measured ``N`` it returns the measured value exactly. Outside the measured
    range it **clamps**: ``n`` below the smallest ``N`` gets ``s(N_min)``, ``n`` above the largest
    gets ``s(N_max)``. Clamping above is conservative for a curve that keeps rising (the paper
    measures up to 512); it never extrapolates.

    Parameters
    ----------
    curve : tuple or dict
        ``(N, s)`` or ``(N, s, meta)`` as returned by :func:`load_curve`, or ``{"N", "s"}``.
    n : int, float or array-like
        Span lengths in tokens (positive and finite; below ``N_min`` the value is clamped).

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``n``, else an array of ``n``'s shape.
    """
    if isinstance(curve, Mapping):
        N, s = curve["N"], curve["s"]
    else:
        N, s = curve[0], curve[1]
    out = interpolate_loglinear(N, s, n)
    return float(out) if out.ndim == 0 else out


def _as_record(path_or_results) -> dict:
    if path_or_results is None:
        return load_results("kernel")
    if isinstance(path_or_results, str | Path):
        return json.loads(Path(path_or_results).read_text())
    if isinstance(path_or_results, Mapping):
        return dict(path_or_results)
    raise TypeError(
        "expected a path to a kernel results JSON, a loaded results dict, or None "
        f"(= results/kernel.json), got {type(path_or_results).__name__}"
    )


def load_curve(path_or_results=None, model: str | None = None):
    """Read one ``s(N)`` curve from a kernel results file. **(API)**

    Parameters
    ----------
    path_or_results : str, Path, dict or None
        A ``results/kernel.json`` path, the dict it holds (``cadlib.record.results.load_results
        ("kernel")``), or ``None`` for ``results/kernel.json`` of this repository.
    model : str or None
        A measured model (e.g. ``"qwen2.5-0.5b-random"``), one of the paper's point sets
        (``"paper:qwen2.5-7b"``, ``"paper:qwen2.5-1.5b"``: only N=8 and N=512 are published),
        or ``None`` for the file's ``primary`` curve (its largest measured model).

    Returns
    -------
    N : numpy.ndarray of int, shape (k,)
        Span lengths, increasing.
    s : numpy.ndarray of float, shape (k,)
        Median speedups ``T_AR/T_PP`` at ``N``.
    meta : dict
        The curve's label (model, shape, dtype, device, hardware, attention, P, trials, ...),
        with ``name`` set to the key it was found under.
    """
    record = _as_record(path_or_results)
    numbers = record.get("numbers", record)
    measured = dict(numbers.get("curves") or {})
    published = dict((record.get("paper") or {}).get("curves") or {})
    if model is None:
        model = numbers.get("primary") or next(iter(measured), None)
        if model is None:
            raise ValueError("the results hold no measured curve; pass model='paper:...'")
    curves = {**published, **measured}
    if model not in curves:
        raise KeyError(f"no s(N) curve for {model!r}; available: {', '.join(curves)}")
    curve = curves[model]
    N = np.asarray(curve["N"], dtype=int)
    s = np.asarray(curve["s"], dtype=float)
    check_curve(N, s)
    return N, s, dict(curve.get("meta") or {}, name=model)


def curve_label(meta: Mapping) -> str:
    """One-line label of a curve: model, weights, dtype, attention, device/hardware, P, t."""
    if meta.get("source") == "paper":
        return (
            f"{meta['model']} (paper, {meta['hardware'].removesuffix(' (paper)')}, "
            f"{meta['dtype']}, {meta['attn_implementation']}, P={meta['P']})"
        )
    hw = meta.get("hardware", {})
    threads = hw.get("threads", "?")
    where = (
        hw.get("gpu")
        if str(meta.get("device", "")).startswith("cuda")
        else (f"CPU, {threads} thread{'' if threads == 1 else 's'}")
    )
    weights = "random-init" if meta.get("random_init") else "pretrained"
    return (
        f"{meta['model']} ({weights}, {meta['dtype']}, {meta['attn_implementation']}, "
        f"{where}, P={meta['P']}, t={meta['trials']})"
    )
