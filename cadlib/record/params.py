"""Profiles and parameters of a chapter: ``cpu`` (2 cores, minutes) or ``paper`` (a GPU).

Each chapter module defines a ``PROFILES`` table; a notebook's ``parameters`` cell sets
``profile`` plus optional overrides (``None`` = take the profile's value), and calls
:func:`choose`. Unknown profiles, unknown parameter names and invalid values fail at once
with a message that lists the valid ones.

A mistyped papermill parameter (``-p n_fuz 10``) would otherwise be silently ignored:
papermill injects it as a variable of its own cell, after the ``parameters`` cell, and nothing
reads it. :func:`choose` therefore calls :func:`check_injected_parameters`, which compares the
names the injected cell assigns with those the cells before it assign.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = [
    "choose",
    "check_choice",
    "check_injected_parameters",
    "INJECTED_HEADER",
    "notebook_parameter",
]

#: The first line of the cell papermill injects (``-p NAME VALUE``), tagged
#: ``injected-parameters``.
INJECTED_HEADER = "# Parameters"


def check_choice(name: str, value, valid: Iterable) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``valid``, listing the valid values."""
    valid = list(valid)
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(map(repr, valid))}")


def _assigned_names(source: str) -> list[str]:
    """The names a cell's top-level statements assign (``x = ...``, ``x: int = ...``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics and the like: not a parameters cell
        return []
    names = []
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, ast.AnnAssign) else [])
        )
        for target in targets:
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return names


def check_injected_parameters(cells: Sequence[str] | None = None) -> None:
    """Raise ``ValueError`` when papermill injected a parameter that the notebook's
    ``parameters`` cell does not define (a mistyped ``-p`` name).

    ``cells``: the sources of the cells run so far, in order (default: the IPython kernel's
    input history ``In``, when running in a kernel; outside one there is nothing to check).
    The injected cell is the last one that starts with :data:`INJECTED_HEADER`; its names are
    compared with those assigned by the cells before it (the ``parameters`` cell).
    """
    if cells is None:
        cells = _kernel_history()
    cells = list(cells)
    injected = [i for i, src in enumerate(cells) if src.lstrip().startswith(INJECTED_HEADER)]
    if not injected:
        return
    at = injected[-1]
    known = {name for src in cells[:at] for name in _assigned_names(src)}
    unknown = [n for n in dict.fromkeys(_assigned_names(cells[at])) if n not in known]
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)} (papermill -p); this notebook's "
            f"parameters are: {', '.join(sorted(known))}"
        )


def notebook_parameter(notebook, name: str):
    """The value of parameter ``name`` an executed notebook ran with: what papermill injected
    (its ``injected-parameters`` cell) when it set ``name``, else the ``parameters`` cell's
    default; ``KeyError`` when neither assigns it. Read from the file, nothing executed (the
    value must be a literal)."""
    cells = json.loads(Path(notebook).read_text())["cells"]
    for tag in ("injected-parameters", "parameters"):
        for cell in cells:
            if tag not in cell.get("metadata", {}).get("tags", []):
                continue
            for node in ast.parse("".join(cell["source"])).body:
                names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
                if isinstance(node, ast.Assign) and name in names:
                    return ast.literal_eval(node.value)
    raise KeyError(f"{notebook} assigns no parameter {name!r}")


def _kernel_history() -> list[str]:
    """The input history of the running IPython kernel (``[]`` outside one)."""
    if "IPython" not in sys.modules:
        return []
    ip = sys.modules["IPython"].get_ipython()
    if ip is None:
        return []
    return [src for src in ip.user_ns.get("In", []) if isinstance(src, str)]


def choose(profiles: Mapping[str, Mapping], profile: str, **overrides) -> dict:
    """The parameters of ``profile`` with every non-``None`` override applied (after
    :func:`check_injected_parameters`).

    >>> choose({"cpu": {"n": 2}, "paper": {"n": 9}}, "cpu", n=None)
    {'n': 2, 'profile': 'cpu'}
    """
    check_injected_parameters()
    check_choice("profile", profile, profiles)
    params = dict(profiles[profile])
    unknown = sorted(set(overrides) - set(params))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)}; valid: {', '.join(sorted(params))}"
        )
    params.update({k: v for k, v in overrides.items() if v is not None})
    params["profile"] = profile
    return params
