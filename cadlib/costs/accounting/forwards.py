"""The forwards of one known output under each method (the package docstring,
:mod:`cadlib.costs.accounting`, lists them), and the Copy-as-Decode compositions with drafts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cadlib.decoding.decode_run import forward_chunks
from cadlib.decoding.drafts import BODY_PLD, Drafter, composition_drafts
from cadlib.decoding.fsm import DECISION_KINDS, Transcript, token_table
from cadlib.decoding.kv_reuse import PromptIndex, feed_sources, parse_policy
from cadlib.decoding.prompt_lookup import lookup_draft, ngram_index
from cadlib.decoding.token_boundaries import op_literal_starts
from cadlib.grammar import Copy

__all__ = [
    "Forward",
    "Accounting",
    "PLD_GRID",
    "M_STAR",
    "DECISION_KINDS",
    "autoregressive",
    "prompt_lookup",
    "copy_as_decode",
    "copy_reuse",
    "copy_sources",
    "BOUND",
    "BODY_PLD",
    "COMPOSITIONS",
    "simulate_forwards",
    "op_starts",
    "first_decisions",
    "composed",
    "bound_forwards",
]

#: The prompt-lookup grid: draft lengths ``K`` x n-gram sizes ``n`` (HF's
#: ``prompt_lookup_num_tokens`` / ``max_matching_ngram_size``; the book's runs use 10, 2).
PLD_GRID = tuple((k, n) for k in (5, 10, 20, 40) for n in (1, 2, 3))
#: Minimum span m* of Appendix J, Table 17 (the "safe" s(N) > 1.5 threshold on Qwen2.5).
M_STAR = 4
#: Method name of the rows that hold what ``bnd_exact`` charges (not a decoder).
BOUND = "bnd_exact charge"


@dataclass(frozen=True)
class Forward:
    """One forward: its ``kind`` (as in :class:`cadlib.decoding.decoder.ForwardRecord`), the number
    of ids it feeds, the context length (ids in the KV cache) before it and the positions whose
    logits it needs (1, or every drafted position plus one for a verify forward)."""

    kind: str
    n_ids: int
    context: int
    logits: int = 1


@dataclass(frozen=True)
class Accounting:
    """The forwards of one method on one case.

    ``T`` is the number of gold ids (the model's tokenizer), the same for every method of a
    case, so ``forwards_per_token`` compares methods; ``output`` counts the ids the method
    appends after its ``prompt`` (gold + EOS for the baselines, the transcript for
    Copy-as-Decode).
    """

    method: str
    setting: str
    forwards: tuple[Forward, ...]
    T: int
    prompt: int
    output: int
    reused: int = 0  # ids whose cache entries were reused, not computed (copy_kv="reuse")

    @property
    def n_forwards(self) -> int:
        """All forwards, the prompt prefill included."""
        return len(self.forwards)

    @property
    def decode_forwards(self) -> int:
        """Forwards after the prompt prefill (what the cost model of §2.1 counts)."""
        return sum(f.kind != "prefill" for f in self.forwards)

    @property
    def ids_fed(self) -> int:
        return sum(f.n_ids for f in self.forwards)

    @property
    def forwards_per_token(self) -> float:
        return self.decode_forwards / self.T if self.T else float("nan")


def _sequential(pieces: Sequence[tuple[str, int]]) -> tuple[Forward, ...]:
    """Forwards of ``(kind, n_ids)`` fed one after the other into a cache that keeps them."""
    out, context = [], 0
    for kind, n in pieces:
        out.append(Forward(kind, n, context))
        context += n
    return tuple(out)


# --------------------------------------------------------------------------------------------
# The three methods
# --------------------------------------------------------------------------------------------


def autoregressive(n_prompt: int, target: Sequence[int], T: int | None = None) -> Accounting:
    """Greedy decoding of ``target`` (gold ids + EOS): the prefill of ``n_prompt`` ids, then
    one forward per target id but the last (``L_AR = tau T``, §2.1)."""
    pieces = [("prefill", n_prompt)] + [("step", 1)] * (len(target) - 1)
    T = len(target) - 1 if T is None else T
    return Accounting("autoregressive", "", _sequential(pieces), T, n_prompt, len(target))


def prompt_lookup(
    prompt: Sequence[int],
    target: Sequence[int],
    K: int = 10,
    n: int = 2,
    T: int | None = None,
    *,
    index: dict | None = None,
) -> Accounting:
    """Prompt-lookup decoding along ``target``
    (:func:`cadlib.decoding.methods.prompt_lookup_along`).

    After the prefill and the first target id, each round drafts up to ``K`` ids by
    matching the last ``n`` (down to 1) ids in prompt + output
    (:func:`cadlib.decoding.prompt_lookup.lookup_draft`; no draft in the last round, where HF's
    ``max_length`` stops it), feeds ``[last id] + draft`` in one verify forward at context
    ``len(seq) - 1`` and accepts the longest prefix of the draft equal to the target plus
    one bonus id; the rejected tail is cropped from the cache.
    Acceptance follows the gold, not the model, as in the book's gold-driven baseline.
    ``index``: the n-gram tables of prompt + target for n up to at least ``n``
    (:func:`cadlib.decoding.prompt_lookup.ngram_index`), to share them between settings.
    """
    seq = list(prompt) + list(target)
    firsts = index if index is not None else ngram_index(seq, n)
    P, k = len(prompt), 1
    out = [Forward("prefill", P, 0)]
    while k < len(target):
        length = P + k
        draft = lookup_draft(seq, length, K, n, firsts) if k < len(target) - 1 else ()
        acc = 0
        while acc < len(draft) and k + acc < len(target) and draft[acc] == target[k + acc]:
            acc += 1
        out.append(Forward("verify", 1 + len(draft), length - 1, 1 + len(draft)))
        k += acc + 1
    T = len(target) - 1 if T is None else T
    return Accounting("prompt lookup", f"K={K} n={n}", tuple(out), T, P, len(target))


def _feeds(tr: Transcript) -> list[tuple[list, list]]:
    """The transcript cut where the model decides: each feed is a decision and the forced
    and spliced ids after it; the first feed holds the forced ids before any decision and
    the last one (ending in ``</program>``) is never fed."""
    cuts = [k for k, kind in enumerate(tr.kinds) if kind in DECISION_KINDS and k > 0]
    bounds = [0, *cuts, len(tr.ids)]
    ids, kinds = list(tr.ids), list(tr.kinds)
    return [(ids[a:b], kinds[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


def copy_as_decode(
    n_prompt: int, tr: Transcript, min_span: int = 0, T: int | None = None
) -> Accounting:
    """The forwards of :class:`cadlib.decoding.decoder.CopyDecoder` forced along the program whose
    transcript is ``tr`` (§2.3-2.4): the prompt prefill with ``<program>\\n``, then one
    forward per decision (op-literal choices, range digits, the terminator that carries a
    copy's ``"/>`` and its spliced lines, body ids, ``</gen>`` ids), a splice of fewer than
    ``min_span`` ids going id by id (Appendix J). ``T`` defaults to the spliced + body ids.
    """
    feeds = _feeds(tr)
    pieces = []
    for k, (ids, kinds) in enumerate(feeds[:-1]):
        if k == 0:
            ids, kinds = [None] * n_prompt + ids, ["prompt"] * n_prompt + kinds
        pieces += [(kind, len(chunk)) for chunk, kind in forward_chunks(ids, kinds, min_span)]
    if T is None:
        T = tr.count("splice") + tr.count("gen")
    return Accounting("Copy-as-Decode", f"m={min_span}", _sequential(pieces), T, n_prompt, len(tr))


def copy_sources(
    prompt_ids: Sequence[int], tr: Transcript, program, doc: str, tokenizer, policy="none"
) -> list[tuple[list, list, list]]:
    """Every fed decision feed of ``tr`` (as :func:`copy_as_decode` cuts it, the first one
    without the prompt) as ``(ids, kinds, sources)``: ``sources`` as
    :func:`cadlib.decoding.kv_reuse.feed_sources` gives them for the reuse decoder (``None``:
    computed). The k-th run of spliced ids belongs to the k-th copy of ``program`` (every copy
    splices at least the newlines around its lines,
    :meth:`cadlib.decoding.token_table.TokenTable.copy_end`)."""
    table = token_table(tokenizer)
    index, policy = PromptIndex(prompt_ids, doc, table.token_bytes), parse_policy(policy)
    copies = iter(op for op in program if isinstance(op, Copy))  # each splices its newlines
    out = []
    for ids, kinds in _feeds(tr)[:-1]:
        lines = None
        if "splice" in kinds:
            op = next(copies)
            lines = (op.start, op.end)
        out.append(
            (
                ids,
                kinds,
                feed_sources(ids, kinds, lines, index, policy) if lines else [None] * len(ids),
            )
        )
    return out


def copy_reuse(
    prompt_ids: Sequence[int],
    tr: Transcript,
    program,
    doc: str,
    tokenizer,
    policy="none",
    T: int | None = None,
) -> Accounting:
    """The forwards of ``CopyDecoder(copy_kv="reuse", recompute=policy)`` forced along
    ``program`` (transcript ``tr``): as :func:`copy_as_decode` at m = 0, but a feed with
    spliced ids is one ``reuse`` forward of the ids it computes, whose context counts the
    reused entries placed before it. ``Accounting.reused`` totals the ids not computed."""
    out, context, reused = [], 0, 0
    for k, (ids, kinds, sources) in enumerate(
        copy_sources(prompt_ids, tr, program, doc, tokenizer, policy)
    ):
        n_reused = sum(s is not None for s in sources)
        if k == 0:
            out.append(Forward("prefill", len(prompt_ids) + len(ids), 0))
        elif "splice" in kinds:
            out.append(Forward("reuse", len(ids) - n_reused, context + n_reused))
        else:
            out.append(Forward(forward_chunks(ids, kinds)[0][1], len(ids), context))
        context += len(ids) + (len(prompt_ids) if k == 0 else 0)
        reused += n_reused
    if T is None:
        T = tr.count("splice") + tr.count("gen")
    return Accounting(
        "Copy-as-Decode",
        f"reuse {parse_policy(policy).name}",
        tuple(out),
        T,
        len(prompt_ids),
        len(tr),
        reused,
    )


# --------------------------------------------------------------------------------------------
# Compositions (issue 17 §3; paper Appendix M): the drafts of cadlib.decoding.drafts, counted
# --------------------------------------------------------------------------------------------

#: Settings of the Copy-as-Decode variants the accounting prices (m = 0 throughout):
#: ``no-JF`` (every forced id, a literal tail or a singleton mask, costs a forward of its own:
#: what jump-forward saves, since the decoder already feeds them with the decision before),
#: ``+PLD`` (prompt-lookup drafts inside bodies), ``+cursor`` (prompt lookup that looks first
#: in the document lines a body stands in for), ``+headers`` (speculative op headers) and the
#: two body rules each with the headers (:class:`cadlib.decoding.drafts.Drafter`).
COMPOSITIONS = (
    "m=0 no-JF",
    "m=0 +PLD",
    "m=0 +cursor",
    "m=0 +headers",
    "m=0 +PLD +headers",
    "m=0 +cursor +headers",
)


def simulate_forwards(
    n_prompt: int, ids: Sequence[int], kinds: Sequence[str], draft=None, jump_forward: bool = True
) -> tuple[Forward, ...]:
    """Forwards of a forced decode along the transcript ``ids`` / ``kinds`` with optional
    drafts, under greedy verification.

    A *decision* is a ``choice`` or ``gen`` id (and, without ``jump_forward``, a ``forced``
    one too); spliced ids are never decided. Before each decision at position ``p`` one
    forward feeds every id not yet in the cache (the prompt with the first) plus
    ``draft(p)`` (ids proposed for positions ``p, p+1, ...``; ``None`` or empty: none). The
    longest prefix of the draft equal to the transcript is accepted and stays in the cache;
    the logits after it decide the next position (the bonus id), and the rejected tail is
    cropped. With no drafts and ``jump_forward`` this is :func:`copy_as_decode` at m = 0
    (a test checks it). A forward that carries a draft is a ``verify`` forward (logits at
    every position); the last id (``</program>``'s end) is never fed.
    """
    decided = DECISION_KINDS if jump_forward else (*DECISION_KINDS, "forced")
    is_decision = [k in decided for k in kinds]
    out, context, start = [], 0, 0  # start: first transcript position not in the cache
    first = 1 if jump_forward else 0  # with jump-forward the leading forced ids ride along
    p = next((k for k in range(first, len(ids)) if is_decision[k]), len(ids))
    while p < len(ids):
        prop = list(draft(p) or ()) if draft is not None else []
        prop = prop[: len(ids) - p]
        fed = (n_prompt if not out else 0) + (p - start)
        if not out:
            kind = "prefill"
        elif prop:
            kind = "verify"
        else:
            kind = (
                "splice"
                if "splice" in kinds[start:p]
                else "forced"
                if p - start > 1
                else kinds[start]
            )
        out.append(Forward(kind, fed + len(prop), context, len(prop) + 1 if prop else 1))
        acc = 0
        while acc < len(prop) and prop[acc] == ids[p + acc]:
            acc += 1
        context += fed + acc
        start = p + acc
        p = next((k for k in range(start + 1, len(ids)) if is_decision[k]), len(ids))
    return tuple(out)


def op_starts(tr: Transcript, table) -> list[int]:
    """Transcript positions of the first id of every op and of ``</program>`` (the id where an
    op literal begins; literal text inside a splice does not count)."""
    return [k for k in op_literal_starts(tr.ids, table) if tr.kinds[k] != "splice"]


def first_decisions(tr: Transcript, table) -> dict[int, int]:
    """``{position of an op's first decision: the op's first position}`` for every op (and
    ``</program>``) whose ids the model decides at all: where a drafter may guess a header."""
    out = {}
    for pos in op_starts(tr, table):
        at = next((j for j in range(pos, len(tr.ids)) if tr.kinds[j] in DECISION_KINDS), None)
        if at is not None:
            out.setdefault(at, pos)
    return out


def composed(
    prompt_ids: Sequence[int],
    tr: Transcript,
    program,
    doc: str,
    tokenizer,
    setting: str = "m=0 +cursor +headers",
    body_pld=BODY_PLD,
    T: int | None = None,
    draft_max_ids: int | None = None,
) -> Accounting:
    """Copy-as-Decode (m = 0) composed with jump-forward and the drafts of
    :class:`cadlib.decoding.drafts.Drafter` named by ``setting`` (one of :data:`COMPOSITIONS`, or
    ``"m=0"``): the forwards a decoder would run along the oracle program under greedy
    verification (:func:`simulate_forwards`). The drafter is the decoder's own, fed the
    oracle transcript up to each forward (``CopyDecoder(drafts=...)``;
    ``tests/test_decoder_drafts.py`` checks the decoder's forwards against these); ``no-JF``
    is the counterfactual it never runs. Every id the FSM allows is still checked, since an
    accepted id equals the transcript's. ``program`` is the oracle program ``tr`` encodes:
    the drafter reads the ops off ``tr``, as the decoder does, so it is not consulted.
    ``draft_max_ids``: the drafts' cap (an engine's draft policy; ``None``: none).
    """
    if setting not in ("m=0", *COMPOSITIONS):
        raise ValueError(f"unknown composition {setting!r}; use one of {('m=0', *COMPOSITIONS)}")
    table = token_table(tokenizer)
    kinds = composition_drafts(setting)
    drafter = Drafter(kinds, table, doc, prompt_ids, body_pld, draft_max_ids) if kinds else None
    firsts = first_decisions(tr, table)

    def draft(p):
        return drafter.propose(tr.ids[:p], tr.kinds[:p], tr.kinds[p], firsts.get(p))

    fw = simulate_forwards(
        len(prompt_ids),
        tr.ids,
        tr.kinds,
        draft if drafter else None,
        jump_forward="no-JF" not in setting,
    )
    if T is None:
        T = tr.count("splice") + tr.count("gen")
    return Accounting("Copy-as-Decode", setting, fw, T, len(prompt_ids), len(tr))


def bound_forwards(n_prompt: int, tr: Transcript) -> tuple[Forward, ...]:
    """What ``bnd_exact`` (§4.2) charges, as forwards: the prefill, one step per body id and
    one forward per run of spliced ids, at their context; no decision forwards. Priced on
    the forward-cost grid it is the bound from the same grid as the predictions."""
    out, k, ids = [Forward("prefill", n_prompt, 0)], 0, tr.kinds
    while k < len(ids):
        if ids[k] == "gen":
            out.append(Forward("step", 1, n_prompt + k))
            k += 1
        elif ids[k] == "splice":
            j = k
            while j < len(ids) and ids[j] == "splice":
                j += 1
            out.append(Forward("splice", j - k, n_prompt + k))
            k = j
        else:
            k += 1
    return tuple(out)
