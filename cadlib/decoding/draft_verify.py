"""Greedy verification of a draft inside the decoder's loop (issue 17 §3).

:class:`cadlib.decoding.drafts.Drafter` proposes ids; this module decides which of them the
decoder keeps. A draft is fed in the forward that decides its first id; the decoder then walks
along it, position by position, while its own choice (a forced id, or the masked argmax; in
forced mode the program's id) equals the draft's. The accepted ids stay in the cache, the
rejected tail is cropped, and the choice at the first rejected position is the next feed. So a
draft never changes the output, only how many forwards produce it.
"""

from __future__ import annotations

from collections.abc import Callable

from .fsm import DECISION_KINDS

__all__ = ["next_draft", "verify_draft"]


def next_draft(drafter, fsm, state, run, plan) -> list[int]:
    """The draft for the decision at ``len(run.ids)`` (forced mode: never past the program's
    end, ``plan`` being its transcript ids)."""
    at = len(run.ids)
    first = at if fsm.at_op_start(state) else run.op_start
    if first is not None and any(k in DECISION_KINDS for k in run.kinds[first:]):
        first = None  # not the op's first decision
    draft = drafter.propose(run.ids, run.kinds, fsm.kind(state), first)
    return draft[: len(plan) - at] if plan is not None else draft


def verify_draft(
    fsm,
    state,
    run,
    plan,
    draft: list[int],
    *,
    session,
    n_feed: int,
    forward: Callable,
    choose: Callable,
    budget: int,
):
    """One forward of the feed (``n_feed`` ids) and ``draft`` (``forward()``: the logits of
    the last ``1 + len(draft)`` positions), then accept the draft's ids while the decoder's
    choice (``choose(state, logits)`` at a decision) equals them; keep the accepted ids and the
    choice after them (if a decision), crop the rejected tail from the cache ``session``; a run
    out of ``budget`` decisions (free run) stops accepting. Generator: yields ``run`` after the
    forward; returns ``(state, next feed, its kinds)``, the trace's ``info`` counting the
    draft ids proposed and accepted."""
    before = len(session)
    rows = forward()
    yield run
    accepted, choice = 0, None  # choice: the decoder's pick at the first unaccepted position
    body = 0  # accepted ids that are body (output) ids
    while state.phase != "done":
        known = state.pending[0][0] if state.pending else fsm.allowed(state).single
        if known is None:  # a decision, from the logits after the accepted ids
            if accepted and plan is None and run.decisions >= budget:
                break
            choice = choose(state, rows[accepted])
        if accepted == len(draft) or (choice if known is None else known) != draft[accepted]:
            break
        body += fsm.kind(state) == "gen"
        state = run.append(fsm, state, draft[accepted], fsm.kind(state))
        accepted, choice = accepted + 1, None
    session.truncate(before + n_feed + accepted)
    info = run.trace.info
    for key, n in (
        ("draft_ids", len(draft)),
        ("draft_accepted", accepted),
        ("draft_accepted_gen", body),
    ):
        info[key] = info.get(key, 0) + n
    if choice is None:  # done, the budget, or a forced id next (absorbed before a forward)
        return state, [], []
    kind = fsm.kind(state)
    return run.append(fsm, state, choice, kind), [choice], [kind]
