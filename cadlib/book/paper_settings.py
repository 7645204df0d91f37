"""The paper's experimental settings, chapter by chapter: one table the ``paper`` profiles obey.

Every chapter module has ``PROFILES["paper"]``; its ``headlines.PAPER_SETTINGS`` (collected by
:func:`settings`) says, for each of its parameters that the paper fixes, the value the profile
must hold, the paper's own value and where the paper states it (a :class:`Setting`). Where our
profile must differ from the paper (a hub model we time by its published shape, a length the
paper's examples fit and ours do not, a setting the paper does not publish), the row declares
the deviation and its reason, and the chapter's text says so too. ``tests/test_profiles.py``
checks every chapter's ``paper`` profile against this table, and that every difference from the
paper is declared there.

The ``dtype`` rows are compared after :func:`cadlib.models.resolve_dtype` on a GPU: a profile
may leave the dtype to the device (``None``: bf16 on CUDA), as the SFT and FIM chapters do.

This is not the home of the paper's published *figures* (those are in :mod:`cadlib.paper`,
e.g. ``cadlib.paper.KERNEL_CURVES``); only of the settings that produced them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "UNPUBLISHED",
    "Setting",
    "CODE_MODEL",
    "deviations",
    "hardware",
    "settings",
    "settings_table",
]

#: The paper's value of a setting it does not publish (in our copy of the text).
UNPUBLISHED = "not published"

#: The SFT pilot's model (paper §5, App. "Training details"); chapter 8 uses it too.
CODE_MODEL = "Qwen/Qwen2.5-Coder-1.5B-Instruct"


@dataclass(frozen=True)
class Setting:
    """One setting of one chapter's ``paper`` profile.

    ``value`` is what ``PROFILES["paper"][key]`` holds; ``paper`` the paper's own value in
    the same terms (or :data:`UNPUBLISHED`); ``source`` where the paper states it;
    ``deviation`` why ``value`` differs from ``paper`` (required exactly when it does).
    """

    value: object
    paper: object
    source: str
    deviation: str | None = None

    @property
    def deviates(self) -> bool:
        return self.paper == UNPUBLISHED or self.value != self.paper


def settings() -> dict[str, dict[str, Setting]]:
    """``{chapter: {parameter: Setting}}``: each chapter's ``headlines.PAPER_SETTINGS``, in book
    order (:func:`cadlib.chapters.chapter_values`)."""
    from cadlib.chapters import chapter_values  # the chapters' headlines import this module

    return chapter_values("headlines", "PAPER_SETTINGS")


def hardware() -> dict[str, str]:
    """``{chapter: where the paper ran it}``: each model chapter's ``headlines.PAPER_HARDWARE``
    (the estimate in book/reproduce.md is for one H200)."""
    from cadlib.chapters import chapter_values

    return chapter_values("headlines", "PAPER_HARDWARE")


def deviations() -> dict[str, dict[str, str]]:
    """``{chapter: {parameter: reason}}`` for every declared difference from the paper."""
    return {
        chapter: {k: s.deviation for k, s in rows.items() if s.deviation}
        for chapter, rows in settings().items()
    }


def settings_table():
    """The table as a pandas DataFrame (chapter, parameter, ours, paper, source, deviation)."""
    import pandas as pd  # heavy: only the book's pages that show the table need it

    return pd.DataFrame(
        [
            {
                "chapter": chapter,
                "parameter": key,
                "paper profile": repr(s.value),
                "paper": repr(s.paper) if s.paper != UNPUBLISHED else UNPUBLISHED,
                "source": s.source,
                "deviation": s.deviation or "",
            }
            for chapter, rows in settings().items()
            for key, s in rows.items()
        ]
    )
