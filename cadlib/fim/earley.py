"""Incremental Earley recognition over lexical symbols (paper §IV).

Two recognizers share one compiled grammar (:class:`~cadlib.fim.compiled.CompiledGrammar`):
this one and :func:`cadlib.fim.nfa_parse.parse_nfa`, which recognizes regular languages:

:class:`Recognizer` (§IV, §III Definition 1)
    The classic incremental recognizer: charts ``c_0 … c_n``, one per symbol read. Feeding one
    more symbol is :meth:`Recognizer.scan`, which returns a *new* immutable :class:`Chart` and
    memoises it on the old one, so "try this symbol without committing" costs nothing extra and a
    state is copied by keeping a reference (the paper's footnote 2: the state is "only an index,
    enabling cheap copies"). ``scan`` returning ``None`` is early rejection: the symbols read are
    not a prefix of any sentence (prefix viability); :meth:`Recognizer.accepts` is the membership
    query. With a trimmed grammar (every nonterminal productive) a non-empty chart is exactly a
    viable prefix.

:func:`cadlib.fim.nfa_parse.parse_nfa` (§IV-A, Fig. 3)
    Earley "parsing" of a regular language, in its own module.

Representation (Aycock & Horspool, "Practical Earley Parsing", 2002): a chart maps each origin
chart ``i`` to one interned *state*, the set of dotted rules ``[E → α • β]`` with that origin,
closed under stepping over nullable nonterminals. Predicted items (origin = this chart) form one
state computed from the nonterminals the chart waits for. So a chart holds one entry per open
origin (the nesting depth), not hundreds of items, and scanner/completer steps are cached
``goto(state, symbol)`` look-ups: an Earley item ``[E → α • β (i)]`` is "dotted rule in
``entries[c_i]``".

Lean charts (issue 34 §5). SmolLM2's vocabulary holds tokens such as 64 dashes, ``((((`` or
``++++``: each character is one more unary operator or bracket, so a mask that evaluates such
a token scans dozens of new charts, one deeper than the other, at nearly every step (measured
along true middles: about half of a mask's new charts). ``lean_charts=True`` (the default,
:data:`LEAN_CHARTS`) makes them cheaper in two ways:

* *finished entries*: an entry whose items are all complete (with a right context, the
  quotient rules make ``factor`` complete at every level of ``- - - -``) takes no further step
  once the chart's completions are done (no ``goto`` on any symbol, nothing predicted, nothing
  scannable), yet it was kept, so every chart of a chain held one entry per level and each
  scan walked them all. They are dropped, except the root origin's, which
  :meth:`Recognizer.accepts` reads; and the completions that run down a chain of finished
  entries (every scan of ``- - - -`` walked all the levels below it again) are memoised per
  origin and state (:meth:`Recognizer._finished_closure`), so a lean chart may hold the live
  part of a state where the full chart holds its union with a finished one: equal for
  everything read later;
* *push chains*: a scan that leaves exactly two entries, none finished, is a *pure push*:
  when ``B = scan(A, t)`` holds exactly ``{A: x, B: p}`` and ``A`` holds ``{A': x, A: p}``
  (same states ``x`` and ``p``), then ``scan(B, t)`` is ``{B: x, C: p}`` again — the kernel,
  the completions and the prediction read only the states ``x`` and ``p``, and the missing
  ``A'`` entry in ``B`` shows that ``x`` takes no step on ``t`` nor on what completes.
  :meth:`Recognizer.scan` records that on ``B`` (``Chart.push``) and builds the next charts of
  the chain directly (``((((``, ``[[[[``), sharing their ``scannable`` set and the lexer's
  ``viable`` memo (equal for equal states).

``lean_charts=False`` keeps every entry, completes each level again and scans every chart the
long way (the previous implementation, which the tests and the mask benchmark compare it
with).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from .cfg import Grammar
from .compiled import CompiledGrammar

__all__ = [
    "Chart",
    "Recognizer",
    "LEAN_CHARTS",
]

#: Default of :class:`Recognizer`'s ``lean_charts`` (see the module docstring); the mask
#: benchmark builds its "previous" arm with it off.
LEAN_CHARTS = True


class Chart:
    """One immutable Earley chart: ``entries[origin_chart] = state`` (§IV; item ``(i)`` = origin).

    ``succ`` memoises :meth:`Recognizer.scan` (symbol class → next chart or ``None``), so repeated
    trial feeding during masking reuses work, and ``depth`` is the number of symbols read;
    ``viable`` is a memo for the lexer (symbol in progress → can this chart still scan it).
    """

    __slots__ = ("entries", "succ", "waits", "scannable", "depth", "viable", "push", "finished")

    def __init__(self, entries: dict, depth: int):
        self.entries = entries
        self.succ: dict = {}
        self.waits: dict = {}
        self.scannable: frozenset | None = None
        self.depth = depth
        self.viable: dict = {}
        self.push: tuple | None = None  # (tclass, x, p, scannable, viable) of a push chain
        self.finished: dict | None = None  # lean charts: finished state -> what it completes

    def __repr__(self) -> str:
        return f"<Chart depth={self.depth} origins={len(self.entries)}>"


class Recognizer:
    """Incremental Earley recognizer of a grammar with one or more start symbols (§IV).

    Parameters
    ----------
    grammar
        The grammar (or a compiled one to share); it should be trimmed (all nonterminals
        productive) for "non-empty chart" to mean "viable prefix".
    starts
        Start nonterminals; several are allowed at once (the constraint uses one per right-context
        branch, §V-B) and :meth:`accepts` asks about one of them.
    lean_charts
        Drop finished entries and build the charts of a push chain directly (see the module
        docstring); default :data:`LEAN_CHARTS`.
    """

    def __init__(
        self,
        grammar: Grammar | CompiledGrammar,
        starts: Iterable[Hashable] | None = None,
        lean_charts: bool | None = None,
    ):
        self.cg = grammar if isinstance(grammar, CompiledGrammar) else CompiledGrammar(grammar)
        self.lean_charts = LEAN_CHARTS if lean_charts is None else lean_charts
        starts = [self.cg.grammar.start] if starts is None else list(starts)
        self.start_ids = {s: self.cg.sym_id[s] for s in starts}
        self.root = Chart({}, 0)
        self.root.entries[self.root] = self.cg.predicted(frozenset(self.start_ids.values()))

    def terminal_ids(self, names: Iterable[Hashable]) -> tuple:
        """Ids of the named terminals that this grammar has (unknown names are dropped)."""
        ids = self.cg.sym_id
        return tuple(ids[n] for n in names if n in ids and ids[n] < self.cg.n_terminals)

    def scan(self, chart: Chart, tclass: tuple) -> Chart | None:
        """Read one symbol that may be any terminal id in ``tclass``; ``None`` = rejected.

        Scanner, completer and predictor of §IV in one step, memoised on ``chart``.
        """
        succ = chart.succ
        if tclass in succ:
            return succ[tclass]
        push = chart.push
        if push is not None and push[0] == tclass:
            new = Chart({chart: push[1]}, chart.depth + 1)
            new.entries[new] = push[2]
            new.scannable, new.viable, new.push = push[3], push[4], push
            succ[tclass] = new
            return new
        cg = self.cg
        goto, union = cg.goto, cg.union
        kernel: dict = {}
        for origin, state in chart.entries.items():
            for t in tclass:
                ns = goto(state, t)
                if ns >= 0:
                    old = kernel.get(origin)
                    kernel[origin] = ns if old is None else union(old, ns)
        if not kernel:
            succ[tclass] = None
            return None
        new = Chart(kernel, chart.depth + 1)
        finished = self._complete(new)
        wanted = frozenset().union(*[cg.wants[s] for s in kernel.values()])
        if wanted:
            kernel[new] = cg.predicted(wanted)
        if self.lean_charts:
            by_next, root = cg.by_next, self.root
            dropped = [o for o, s in kernel.items() if not by_next[s] and o is not root]
            for o in dropped:
                del kernel[o]  # finished: no step, completion or prediction reads it again
            if not (finished or dropped) and len(kernel) == 2:
                self._mark_push(chart, new, tclass)
        succ[tclass] = new
        return new

    def _mark_push(self, chart: Chart, new: Chart, tclass: tuple) -> None:
        """Record on ``new`` that scanning ``tclass`` from it is a pure push (see the module
        docstring): ``new`` holds exactly ``{chart: x, new: p}`` (nothing was dropped) and
        ``chart`` holds ``{A': x, chart: p}`` (its dropped entries were finished, so they took
        no part in making ``new``)."""
        x, p = new.entries.get(chart), new.entries.get(new)
        if x is None or p is None or len(chart.entries) != 2 or chart.entries.get(chart) != p:
            return
        if not any(o is not chart and s == x for o, s in chart.entries.items()):
            return
        scannable = self.scannable(new)
        new.push = (tclass, x, p, scannable, new.viable)

    def _complete(self, chart: Chart) -> bool:
        """Completer: propagate every finished ``E`` (origin ``o``) to the items of ``o`` waiting
        for ``E``, until nothing changes (nullable completions are inside the states).

        Lean charts hand a *finished* entry ``(o, state)`` (every item complete, ``o`` not the
        root) to :meth:`_finished_closure` instead of the worklist: it is not added (it would
        be dropped), and what its completions add is memoised on ``o``. Returns whether such an
        entry was met (so the chart is no pure push)."""
        if self.lean_charts:
            kernel = dict(chart.entries)
            try:
                return self._worklist(chart, True)
            except _Cycle:  # finished completions that feed themselves: the plain worklist
                chart.entries.clear()
                chart.entries.update(kernel)
                self._worklist(chart, False)
                return True
        return self._worklist(chart, False)

    def _worklist(self, chart: Chart, lean: bool) -> bool:
        """:meth:`_complete`'s worklist (``lean``: finished entries to their closures)."""
        cg = self.cg
        completed, union, by_next = cg.completed, cg.union, cg.by_next
        root = self.root
        entries = chart.entries
        done = set()
        work = list(entries.items())
        met = False
        while work:
            origin, state = work.pop()
            for a in completed[state]:
                key = (origin, a)
                if key in done:
                    continue
                done.add(key)
                for o2, ns in self._waiting(origin, a):
                    if lean and not by_next[ns] and o2 is not root:
                        met = True
                        adds = self._finished_closure(o2, ns)
                    else:
                        adds = ((o2, ns),)
                    for o2, ns in adds:
                        old = entries.get(o2)
                        if old is None:
                            entries[o2] = ns
                            work.append((o2, ns))
                        else:
                            u = union(old, ns)
                            if u != old:
                                entries[o2] = u
                                work.append((o2, u))
        return met

    def _finished_closure(self, origin: Chart, state: int) -> tuple:
        """``((origin', state'), …)``: the entries that completing the finished entry
        ``(origin, state)`` adds, following further finished entries down (themselves left
        out) and stopping at live ones or the root's, which the completer's worklist takes on.
        Completion distributes over the union of states and an origin chart never changes, so
        this is a function of ``(origin, state)``, memoised on ``origin``: with a right
        context, ``- - - -`` finishes a quotient ``factor`` at every level, and a scan no
        longer walks all the levels below it again. (A finished part of a union left out
        changes nothing read later: no step, prediction or scannable terminal, and its
        completions are here.)"""
        memo = origin.finished
        if memo is None:
            memo = origin.finished = {}
        got = memo.get(state)
        if got is not None:
            if got is _IN_PROGRESS:
                raise _Cycle
            return got
        memo[state] = _IN_PROGRESS
        try:
            cg = self.cg
            by_next, root, union = cg.by_next, self.root, cg.union
            out: dict = {}
            for a in cg.completed[state]:
                for o2, ns in self._waiting(origin, a):
                    adds = (
                        self._finished_closure(o2, ns)
                        if not by_next[ns] and o2 is not root
                        else ((o2, ns),)
                    )
                    for o3, s3 in adds:
                        old = out.get(o3)
                        out[o3] = s3 if old is None else union(old, s3)
        except BaseException:
            del memo[state]
            raise
        got = memo[state] = tuple(out.items())
        return got

    def _waiting(self, chart: Chart, a: int) -> list:
        """``(origin, goto(state, a))`` for the entries of a finished chart waiting for ``a``."""
        got = chart.waits.get(a)
        if got is None:
            goto = self.cg.goto
            got = []
            for origin, state in chart.entries.items():
                ns = goto(state, a)
                if ns >= 0:
                    got.append((origin, ns))
            chart.waits[a] = got
        return got

    def accepts(self, chart: Chart, start: Hashable | None = None) -> bool:
        """Membership: the symbols read form a complete sentence derived from ``start``."""
        state = chart.entries.get(self.root)
        if state is None:
            return False
        ids = self.start_ids.values() if start is None else (self.start_ids[start],)
        done = self.cg.completed[state]
        return any(s in done for s in ids)

    def scannable(self, chart: Chart) -> frozenset:
        """Terminal ids that can be read next (the paper's ST(c))."""
        got = chart.scannable
        if got is None:
            terms = self.cg.terms
            got = chart.scannable = frozenset().union(*[terms[s] for s in chart.entries.values()])
        return got

    def feed(self, symbols: Iterable, chart: Chart | None = None) -> Chart | None:
        """Scan a sequence of terminal *names* from ``chart`` (default: the root)."""
        chart = self.root if chart is None else chart
        for sym in symbols:
            chart = self.scan(chart, (self.cg.sym_id[sym],))
            if chart is None:
                return None
        return chart


#: A finished closure being computed (see Recognizer._finished_closure).
_IN_PROGRESS = ("in progress",)


class _Cycle(Exception):
    """Finished completions that feed themselves (the plain worklist completes that chart)."""
