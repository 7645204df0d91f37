"""Copy-as-Decode and full regeneration, the format protocol and the registry of formats."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cadlib.grammar import Program, ProgramSyntaxError, parse_program
from cadlib.resolver import ResolveError, resolve

from .run_failures import ApplyError, _diagnose_generic
from .run_search_replace import (
    _diagnose_search_replace,
    ambiguous_anchors,
    apply_search_replace,
    parse_search_replace,
    render_search_replace,
)
from .run_unified_diff import _hunk_count, apply_unified_diff, render_unified_diff

__all__ = [
    "EXTENSION_FORMATS",
    "FORMATS",
    "TABLE3_FORMATS",
    "EditFormat",
]

# ---------------------------------------------------------------------------------------------
# Copy-as-Decode and full regeneration
# ---------------------------------------------------------------------------------------------


def _apply_program(doc: str, text: str) -> str:
    try:
        return resolve(parse_program(text), doc)
    except ProgramSyntaxError as err:
        raise ApplyError("program-syntax", str(err)) from err
    except ResolveError as err:
        raise ApplyError("range-error", str(err)) from err


# ---------------------------------------------------------------------------------------------
# The format protocol and registry
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EditFormat:
    """One edit format: how to write an edit and how a tool applies it.

    ``render(doc, gold, program)`` gives the text a model would emit (``program`` is the
    oracle program, computed once per case); ``apply(doc, text)`` parses it back and applies
    it, raising :class:`ApplyError`; ``diagnose(doc, gold, output, error)`` names the
    category and detail of a failed round trip (``output`` is None when ``error`` was
    raised); ``units(text)`` counts blocks / hunks / ops; ``extra(doc, gold)`` gives
    format-specific columns (S/R: ``ambiguous_anchors``).
    """

    name: str
    label: str
    render: Callable[[str, str, Program], str]
    apply: Callable[[str, str], str]
    diagnose: Callable[..., tuple[str, str]] = _diagnose_generic
    units: Callable[[str], int] = field(default=lambda text: 1)
    extra: Callable[[str, str], dict] = field(default=lambda doc, gold: {})


def _unified_diff_format(context: int) -> EditFormat:
    return EditFormat(
        name="unified-diff" if context == 3 else f"unified-diff-u{context}",
        label=f"unified diff (git apply, {context} context line{'s' * (context != 1)})",
        render=lambda doc, gold, program: render_unified_diff(doc, gold, context),
        apply=lambda doc, text: apply_unified_diff(doc, text, context),
        units=_hunk_count,
    )


def _search_replace_format(unique: bool = False, fenced: bool = False) -> EditFormat:
    name, label = "search-replace", "search/replace (Aider)"
    if unique:
        name, label = "search-replace-unique", "search/replace, disambiguated anchors"
    if fenced:
        name, label = "search-replace-fenced", "search/replace with Aider's file line and fence"
    return EditFormat(
        name=name,
        label=label,
        render=lambda doc, gold, program: render_search_replace(doc, gold, unique, fenced),
        apply=apply_search_replace,
        diagnose=lambda doc, gold, out, err: _diagnose_search_replace(doc, gold, out, err, unique),
        units=lambda text: len(parse_search_replace(text)),
        extra=lambda doc, gold: {"ambiguous_anchors": ambiguous_anchors(doc, gold, unique)},
    )


FORMATS: dict[str, EditFormat] = {
    fmt.name: fmt
    for fmt in (
        EditFormat("full", "full regeneration", lambda doc, gold, p: gold, lambda d, t: t),
        _search_replace_format(unique=False),
        _unified_diff_format(3),
        EditFormat(
            "cad",
            "Copy-as-Decode",
            lambda doc, gold, program: str(program),
            _apply_program,
            units=lambda text: len(parse_program(text)),
        ),
        _search_replace_format(unique=True),
        _search_replace_format(fenced=True),
        _unified_diff_format(0),
        _unified_diff_format(1),
    )
}
#: the paper's four rows (Table 3), and our extensions
TABLE3_FORMATS = ("full", "search-replace", "unified-diff", "cad")
EXTENSION_FORMATS = (
    "search-replace-unique",
    "search-replace-fenced",
    "unified-diff-u0",
    "unified-diff-u1",
)
