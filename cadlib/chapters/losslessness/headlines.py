"""What the book's pages read of chapter 1 (losslessness): its summary rows (§4.3, App. I, and
the tokenizer portability of App. A and K), the re-run tolerances of ``results/losslessness.json``,
its coverage rows and what it adds beyond the paper."""

from __future__ import annotations

from collections.abc import Callable

from cadlib import paper as P
from cadlib.book import rerun_check as R
from cadlib.book import verdicts as V
from cadlib.book.coverage import Item
from cadlib.book.summary.spec import (
    PAPERMILL,
    ROUND_TRIP,
    Headline,
    absent,
    lookup,
    percent_headline,
    ratio,
)

__all__ = ["BEYOND_THE_PAPER", "COVERAGE", "HEADLINES", "TOLERANCES"]

_HUB_TOKENIZERS = V.not_run_here(
    "CodeLlama's own (SentencePiece) tokenizer needs the hub; Llama 3's BPE stands in for the "
    "paper's 'CodeLlama (Llama-3)'",
    PAPERMILL.format(*["01_losslessness.ipynb"] * 2) + " -p portability_tokenizers "
    "'[\"codellama/CodeLlama-7b-Instruct-hf\"]'",
)


def _n_ids(name: str, literals) -> Callable[[dict], float]:
    """How many of ``literals`` take exactly two ids under tokenizer ``name``."""
    return lambda numbers: sum(
        numbers["portability"][name]["literals"]["n_ids"][lit] == 2 for lit in literals
    )


def _same_ids(port: str, paper_ids) -> Callable[[dict], float]:
    """How many ids of our ``</gen>`` detector equal the paper's, position by position (a
    detector of another length agrees on none: it is another id sequence). Shown, not counted:
    the paper's ids are the literal's, ours the detector's after a newline."""

    def count(numbers):
        ours = lookup(numbers, port)["fsm"]["gen_close"]
        if len(ours) != len(paper_ids):
            return 0
        return sum(a == b for a, b in zip(ours, paper_ids, strict=True))

    return count


def _common_single(names) -> Callable[[dict], float]:
    """Literals that are one token under every tokenizer of ``names`` (as
    ``cadlib.chapters.losslessness.run_portability.single_token_everywhere``, without importing
    it: it needs torch)."""

    def count(numbers):
        per = [numbers["portability"][n]["literals"]["n_ids"] for n in names]
        return sum(all(p.get(lit) == 1 for p in per) for lit in per[0])

    return count


def _appendix_rows() -> tuple[Headline, ...]:
    """App. K (and the ids of App. A and I) on the tokenizers loaded offline."""
    port = "portability.qwen2.5"
    rows = [
        Headline(
            "losslessness",
            "App. K: Qwen2.5 short literals (App. A) that are one token",
            "App. K / App. A",
            float(len(P.LITERAL_IDS)),
            f"{port}.literals.short_single",
            "literals",
            V.exact(
                0,
                "App. K: Qwen encodes every short literal as one token; App. A lists "
                "ten (a recount with the same tokenizer)",
            ),
            n=f"{port}.literals.short_total",
        ),
        Headline(
            "losslessness",
            "App. A: Qwen2.5 literal ids equal to the paper's",
            "App. A",
            float(len(P.LITERAL_IDS)),
            lambda n: sum(bool(r["agrees"]) for r in n["literal_audit"]),
            "literals",
            V.exact(
                0,
                "a recount with the same tokenizer; the paper's id for '\"/>' (9685) decodes to "
                "'/>' and its id for '/>' (2577) to 'af' (losslessness chapter)",
            ),
            n=lambda n: len(n["literal_audit"]),
        ),
        Headline(
            "losslessness",
            "App. I: Qwen2.5 </gen> detector ids equal to the paper's (522 4370 29)",
            "App. I",
            float(len(P.APPENDIX_K["gen_close_ids"])),
            _same_ids(port, P.APPENDIX_K["gen_close_ids"]),
            "ids",
            V.not_comparable(
                "the paper's ids are those of the literal '</gen>' alone, which chapter 1 finds "
                "the same ('</' 522, 'gen' 4370, '>' 29 in App. A's audit); ours are the "
                "detector's, read where a transcript has '</gen>' followed by a newline, which "
                "Qwen2.5 merges with '>' into one id ('>\\n', 397): another id sequence, not a "
                "recount of the paper's (losslessness chapter)"
            ),
            n=len(P.APPENDIX_K["gen_close_ids"]),
        ),
        Headline(
            "losslessness",
            "App. K: DeepSeek-Coder: of the paper's three split literals, those that are two ids",
            "App. K",
            float(len(P.APPENDIX_K["deepseek_two_id_literals"])),
            _n_ids("deepseek-coder", P.APPENDIX_K["deepseek_two_id_literals"]),
            "literals",
            V.exact(
                0,
                "a recount on DeepSeek-Coder's vocabulary (llama.cpp's copy, "
                "converted by transformers)",
            ),
            n=len(P.APPENDIX_K["deepseek_two_id_literals"]),
        ),
        Headline(
            "losslessness",
            "App. K: Llama 3 short literals (App. A) that are one token",
            "App. K",
            float(len(P.LITERAL_IDS)),
            "portability.llama-3.literals.short_single",
            "literals",
            V.not_comparable(
                "the paper's figure is CodeLlama's; ours is Llama 3's BPE (llama.cpp's copy), "
                "a different tokenizer; CodeLlama itself is not run here (losslessness chapter)"
            ),
            n="portability.llama-3.literals.short_total",
        ),
        Headline(
            "losslessness",
            "App. K: literals that are one token in Qwen2.5, DeepSeek-Coder and Llama 3",
            "App. K",
            float(P.APPENDIX_K["single_token_literals"][0]),
            _common_single(("qwen2.5", "deepseek-coder", "llama-3")),
            "literals",
            V.not_comparable(
                "the paper says 'at least 7 of 14' without listing its 14 "
                "literals; ours are 16 (App. A's ten and the grammar's tags)"
            ),
        ),
        Headline(
            "losslessness",
            "App. K: CodeLlama's SentencePiece tokenizer",
            "App. K",
            None,
            absent,
            "",
            _HUB_TOKENIZERS,
        ),
    ]
    for name in ("qwen3.6", "smollm2-135m-instruct", "deepseek-coder", "llama-3"):
        rows.append(
            percent_headline(
                "losslessness",
                f"App. K: {name}: oracle transcripts the FSM accepts and round-trips",
                "App. K",
                None,
                ratio(
                    f"portability.{name}.transcripts.round_trip",
                    f"portability.{name}.transcripts.cases",
                ),
                V.beyond(),
                n=f"portability.{name}.transcripts.cases",
            )
        )
    return tuple(rows)


#: The summary's rows (§4.3, Appendix I, Table 4; Appendices A and K).
HEADLINES: tuple[Headline, ...] = (
    Headline(
        "losslessness",
        "oracle round trip, byte-exact (pooled 3 corpora)",
        "§4.3",
        P.LOSSLESSNESS["cases"]["pooled"],
        "round_trip.pooled (paper's three).byte-exact",
        "cases",
        ROUND_TRIP,
        n="round_trip.pooled (paper's three).cases",
    ),
    Headline(
        "losslessness",
        "escape fuzz round trips (of 10,000)",
        "App. I",
        P.QUOTED["App. I"][0],
        "escape_fuzz.round_trip",
        "strings",
        V.by_construction(
            "our escape is a bijection on entity-free text (by its "
            "construction, checked by property tests in chapter 1), so no "
            "fuzz string can fail; our fuzz strings are not the paper's"
        ),
        n="escape_fuzz.n",
    ),
    *_appendix_rows(),
)

#: Re-run tolerances (:mod:`cadlib.book.rerun_check`): no model, so every float is a ratio of
#: counts.
TOLERANCES: list[tuple[str, R.Tolerance]] = [("numbers.*", R.COUNT_RATIO)]

#: The coverage map's rows this chapter alone treats (:mod:`cadlib.book.coverage`).
COVERAGE: tuple[Item, ...] = (
    Item(
        "App. I",
        "escape round trip, fuzz, end-of-gen detector",
        ("01_losslessness",),
        ("escape fuzz*", "App. I:*"),
    ),
    Item(
        "App. K",
        "tokenizer portability: literal ids, the FSM's id table",
        ("01_losslessness",),
        ("App. K*",),
        note="Qwen2.5, Qwen3.5/3.6, SmolLM2, DeepSeek-Coder and Llama 3 "
        "(llama.cpp's vocabulary files), offline; CodeLlama's own vocabulary needs the hub; "
        "the splice adapter (paged attention) is not built here",
    ),
)

#: What the chapter adds beyond the paper (the summary's list).
BEYOND_THE_PAPER: tuple[str, ...] = (
    "a byte-exact round trip for every pair of strings (not up to a trailing "
    "newline), checked with property tests; an escape that is injective on all text",
    "the four other HumanEvalPack languages (Java, Go, C++, Rust)",
)
