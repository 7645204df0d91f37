"""Constrained fill-in-the-middle decoding by left and right quotients (companion paper)."""

from .constraint import FIMConstraint, UnconnectableContextError, UnsupportedLanguageError

__all__ = ["FIMConstraint", "UnconnectableContextError", "UnsupportedLanguageError"]
