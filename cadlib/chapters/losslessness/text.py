"""Chapter 1's generated prose: the Answer (:func:`answer`) and the reading of Appendix K's
portability checks (:func:`finding`), each from the chapter's numbers."""

from __future__ import annotations

from collections.abc import Mapping

from cadlib import paper as _paper
from cadlib.models.tokenizer import QWEN25

from .run_portability import PAPER_FAMILIES, SHORT_LITERALS, single_token_everywhere

__all__ = ["answer", "finding"]


def answer(numbers: dict) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**):
    ``numbers`` as written to ``results/losslessness.json``."""
    rt = numbers["round_trip"]
    corpora = {k: v for k, v in rt.items() if not k.startswith("pooled")}
    n = sum(v["cases"] for v in corpora.values())
    exact = sum(v["byte-exact"] for v in corpora.values())
    fuzz = numbers["escape_fuzz"]
    lossless = exact == n and fuzz["round_trip"] == fuzz["n"]
    verdict = "**Yes.**" if lossless else "**No.**"
    blame = (
        "so an exact-match failure of a model is a span-selection failure, never the mechanism's"
        if lossless
        else "so a model's exact-match failures cannot all be blamed on span selection"
    )
    return (
        f"{verdict} Resolved through the deployment code path, the oracle programs "
        f"reproduce the gold byte for byte in {exact:,} of {n:,} cases over {len(corpora)} "
        f"corpora, and the reserved-literal escape round-trips {fuzz['round_trip']:,} of "
        f"{fuzz['n']:,} adversarial strings: {blame}."
    )


def _paper_claims(summaries: Mapping[str, Mapping]) -> list[str]:
    """Appendix K's two per-family claims, checked where the family's tokenizer is loaded."""
    out, k = [], _paper.APPENDIX_K
    for name, family in ((QWEN25, "Qwen2.5"), ("llama-3", "CodeLlama")):
        if name in summaries:
            lit = summaries[name]["literals"]
            holds = lit["short_single"] == lit["short_total"]
            out.append(
                f"- Paper: {family} encodes every short literal as one token. {name}: "
                f"{'yes' if holds else 'no'} ({lit['short_single']} of "
                f"{lit['short_total']})."
            )
    if "deepseek-coder" in summaries:
        n_ids = summaries["deepseek-coder"]["literals"]["n_ids"]
        split = {lit: n for lit, n in n_ids.items() if lit in SHORT_LITERALS and n > 1}
        named = k["deepseek_two_id_literals"]
        as_paper = all(n_ids.get(lit) == 2 for lit in named)
        extra = [lit for lit in split if lit not in named]
        out.append(
            "- Paper: DeepSeek-Coder splits "
            + ", ".join(f"`{x}`" for x in named)
            + f" into two ids each. deepseek-coder: {'yes' if as_paper else 'no'}; the short "
            "literals it splits: "
            + ", ".join(f"`{x}` ({n} ids)" for x, n in split.items())
            + (
                f" (beyond the paper's three: {', '.join(f'`{x}`' for x in extra)})."
                if extra
                else "."
            )
        )
    return out


def finding(summaries: Mapping[str, Mapping], missing: Mapping[str, str]) -> str:
    """The chapter's reading of :func:`.show.portability_table`, generated from the numbers."""
    parts = []
    for name, rec in summaries.items():
        lit, fsm, tr = rec["literals"], rec["fsm"], rec["transcripts"]
        merged = ", ".join(f"`{k}` ×{v}" for k, v in sorted(tr["merges"].items())) or "none"
        parts.append(
            f"- **{name}**: {lit['short_single']} of Appendix A's {lit['short_total']} short "
            f"literals are single tokens ({lit['all_single']} of all {lit['all_total']} "
            f"literals; the longest takes {lit['max_ids']} ids); `</gen>` is detected as "
            f"{len(fsm['gen_close'])} ids ({' + '.join(repr(p) for p in fsm['gen_close_pieces'])}"
            f"). The FSM accepts {tr['accepted']} of {tr['cases']} oracle transcripts, "
            f"{tr['round_trip']} round-trip to the gold, and {tr['canonical']} are the "
            f"tokenizer's own encoding of their text. Ids crossing a literal boundary: {merged}."
        )
    parts += _paper_claims(summaries)
    lo, of = _paper.APPENDIX_K["single_token_literals"]
    groups = [(f"the {len(summaries)} tokenizers loaded here", list(summaries))]
    if all(n in summaries for n in PAPER_FAMILIES):
        groups.append(
            ("the paper's three families (Qwen2.5, DeepSeek-Coder, Llama 3)", list(PAPER_FAMILIES))
        )
    for label, names in groups:
        if len(names) < 2:
            continue
        common = single_token_everywhere([summaries[n] for n in names])
        total = len(summaries[names[0]]["literals"]["n_ids"])
        parts.append(
            f"- Across {label}, {len(common)} of the {total} literals are one token in every "
            f"one (the paper: at least {lo} of {of} across its three families; its list of 14 "
            "is not in our copy)."
        )
    if missing:
        parts.append(
            "- Not loaded here: " + "; ".join(f"{n} ({why})" for n, why in missing.items())
        )
    return "\n".join(parts)
