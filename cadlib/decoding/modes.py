"""The decoder's three modes as policy objects (:class:`cadlib.decoding.decoder.CopyDecoder`).

One loop runs every mode: feed, forward, masked argmax, append. What differs is asked of the
mode, at three points: before a forward (:meth:`FreeRun.before_forward`: has the budget run
out, and what then), after the masked argmax (:meth:`FreeRun.pick`: keep the model's id, or
take the program's), and at the end (:meth:`FreeRun.agreement`, :meth:`FreeRun.check`).

* :class:`FreeRun`: every decision is the model's; the budget counts them and, when it runs
  out, the program is closed minimally (:meth:`cadlib.decoding.fsm.CopyGenFSM.closing_ids`).
* :class:`Forced`: the decoder is driven along a given program (its transcript): every
  decision runs the same forward, mask and argmax, then takes the program's id (the mechanism
  under perfect span selection); no budget.
* :class:`Localized`: the program's ops and copy spans are given, the model writes each
  ``<gen>`` body (:class:`cadlib.decoding.decode_run.LocalizedBodies`); the budget bounds each
  body, and an exhausted body is closed by ``</gen>``.
"""

from __future__ import annotations

from .decode_run import LocalizedBodies

__all__ = ["FreeRun", "Forced", "Localized", "decode_mode"]


class FreeRun:
    """The model decides everything; ``budget`` decisions at most (then the program is closed
    minimally and the run stops)."""

    plan = None  # the planned transcript ids (forced modes)
    body = None  # the localized bodies (localized mode)

    def __init__(self, budget: int):
        self.budget, self.budget_closed = budget, False

    def before_forward(self, fsm, state, run, feed, kinds) -> tuple[object, str | None]:
        """Before a forward at a decision: ``(state, None)`` to go on, or ``"stop"`` (the run
        is over) / ``"again"`` (ids were appended to ``feed``: absorb forced ids again)."""
        if run.decisions < self.budget:
            return state, None
        for tok in fsm.closing_ids(state):
            kind = state.pending[0][1] if state.pending else "forced"
            state = run.append(fsm, state, tok, kind)
        self.budget_closed = True
        return state, "stop"

    def body_open(self) -> bool:
        """Whether a model-written ``<gen>`` body of a localized edit is open."""
        return False

    def pick(self, tok: int, run) -> int:
        """The id the decoder appends after its masked argmax ``tok``."""
        return tok

    def after_append(self, state, run) -> None:
        """After an id is appended at a decision (a localized body may have ended)."""

    def agreement(self, run) -> float | None:
        """The share of the model's decisions that equal the plan's (forced modes)."""
        return None

    def check(self, ids: tuple) -> None:
        """Raise when the run left what the mode promises (forced: the program's transcript)."""

    @property
    def processors(self) -> list:
        """The per-body masks a localized edit applied, in body order."""
        return []


class Forced(FreeRun):
    """Driven along the program whose transcript ids are ``plan``: the model's masked argmax
    is computed and compared (:meth:`agreement`), the program's id is kept; no budget."""

    def __init__(self, plan, budget: int):
        super().__init__(budget)
        self.plan = plan

    def before_forward(self, fsm, state, run, feed, kinds):
        return state, None

    def pick(self, tok: int, run) -> int:
        want = self.plan[len(run.ids)]
        run.agree += tok == want
        return want

    def agreement(self, run) -> float | None:
        return run.agree / run.decisions if run.decisions else None

    def check(self, ids: tuple) -> None:
        if ids != tuple(self.plan):
            raise RuntimeError("forced decoding left the program's transcript")


class Localized(Forced):
    """The program's ops and copies are followed, the model writes each ``<gen>`` body
    (greedy under the grammar's body mask and the optional per-body ``gen_processor``), at
    most ``budget`` decisions per body."""

    def __init__(self, plan, program, doc: str, gen_processor, budget: int):
        super().__init__(plan.ids, budget)
        self.body = LocalizedBodies(plan, program, doc, gen_processor)

    def before_forward(self, fsm, state, run, feed, kinds):
        body = self.body
        if state.phase != "gen" or not body.open(fsm, run) or body.decisions < self.budget:
            return state, None
        for tok in fsm.table.gen_close[state.closer :]:  # close this body, go on
            state = run.append(fsm, state, tok, "gen")
            feed.append(tok)
            kinds.append("gen")
        body.close(run, budget=True)
        self.budget_closed = True
        return state, "again"

    def body_open(self) -> bool:
        return self.body.is_open

    def pick(self, tok: int, run) -> int:
        want = self.plan[len(run.ids) - self.body.shift]
        run.agree += tok == want
        return want

    def after_append(self, state, run) -> None:
        if self.body.is_open and state.phase != "gen":
            self.body.close(run, budget=False)

    def agreement(self, run) -> float | None:
        planned = run.decisions - self.body.total_decisions  # the planned decisions only
        return run.agree / planned if planned else None

    def check(self, ids: tuple) -> None:
        """Bodies differ from the planned ones: nothing to compare id for id."""

    @property
    def processors(self) -> list:
        return self.body.processors


def decode_mode(plan, program, doc: str, free_gen: bool, gen_processor, budget: int) -> FreeRun:
    """The mode of one decode: free when there is no program, localized with ``free_gen``,
    else forced (``plan``: the program's :class:`cadlib.decoding.fsm.Transcript`)."""
    if program is None:
        return FreeRun(budget)
    if free_gen:
        return Localized(plan, program, doc, gen_processor, budget)
    return Forced(plan.ids, budget)
