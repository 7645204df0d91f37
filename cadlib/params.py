"""Profiles and parameters of a chapter: ``cpu`` (2 cores, minutes) or ``paper`` (a GPU).

Each chapter module defines a ``PROFILES`` table; a notebook's ``parameters`` cell sets
``profile`` plus optional overrides (``None`` = take the profile's value), and calls
:func:`choose`. Unknown profiles, unknown parameter names and invalid values fail at once
with a message that lists the valid ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["choose", "check_choice"]


def check_choice(name: str, value, valid: Iterable) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``valid``, listing the valid values."""
    valid = list(valid)
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(map(repr, valid))}")


def choose(profiles: Mapping[str, Mapping], profile: str, **overrides) -> dict:
    """The parameters of ``profile`` with every non-``None`` override applied.

    >>> choose({"cpu": {"n": 2}, "paper": {"n": 9}}, "cpu", n=None)
    {'n': 2, 'profile': 'cpu'}
    """
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
