"""Earley "parsing" of a regular language (paper §IV-A, Fig. 3): one chart per NFA state, the
scanner follows the NFA's arrows (including ε-arrows and cycles), items are added until a
fixpoint. It shares :class:`cadlib.fim.compiled.CompiledGrammar` (its interned states and
cached ``goto``) with the incremental recognizer; the charts it returns feed the quotient
extraction of Fig. 2 (:mod:`cadlib.fim.quotient`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable

from .compiled import CompiledGrammar

__all__ = [
    "NFAChart",
    "parse_nfa",
]


class NFAChart:
    """A mutable chart attached to one NFA state during :func:`parse_nfa`."""

    __slots__ = ("q", "entries", "done", "wanted", "listeners")

    def __init__(self, q: int):
        self.q = q
        self.entries: dict = {}
        self.done: set = set()
        self.wanted: frozenset = frozenset()
        self.listeners: dict = defaultdict(set)

    def __repr__(self) -> str:
        return f"<NFAChart q={self.q} origins={len(self.entries)}>"


def _sccs(n: int, edges: list) -> list[list[int]]:
    """Strongly connected components in topological order (Tarjan, iterative)."""
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            succ = edges[v]
            if i < len(succ):
                work.append((v, i + 1))
                w = succ[i][1]
                if index[w] < 0:
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    out.reverse()
    return out


def parse_nfa(cg: CompiledGrammar, nfa, start_symbol: Hashable) -> list[NFAChart]:
    """Earley over an NFA (§IV-A, Fig. 3): one chart per NFA state, computed to a fixpoint.

    Parameters
    ----------
    cg
        The compiled grammar.
    nfa
        A :class:`cadlib.fim.regular.NFA` whose labels are tuples of terminal ids (a symbol
        class) or ``None`` (ε).
    start_symbol
        Predicted in the chart of ``nfa.start``.

    Returns
    -------
    list of NFAChart
        ``charts[q]`` for every NFA state ``q``: its items are those of every path from the
        start to ``q``. ``L(G) ∩ R ≠ ∅`` iff a final chart completes the start symbol.

    Notes
    -----
    States are processed one strongly connected component at a time in topological order;
    inside a component, an item added to a chart is scanned along the component's arrows at
    once, and completions whose origin may still grow leave a *listener* so that later
    additions to the origin are propagated ("additional bookkeeping to ensure that newly added
    completable items are always processed by the completer", §IV-A).
    """
    run = _NFAParse(cg, nfa)
    run.seed(start_symbol)
    for comp in _sccs(nfa.n_states, nfa.edges):
        run.component(comp)
    return run.charts


class _NFAParse:
    """The steps of :func:`parse_nfa`: seed the start chart, close one strongly connected
    component (scanner along its arrows, completer with listeners, predictor), and export
    its charts' kernels along the arrows that leave it."""

    def __init__(self, cg: CompiledGrammar, nfa):
        self.cg, self.nfa = cg, nfa
        self.charts = [NFAChart(q) for q in range(nfa.n_states)]
        self.pending: dict[int, dict] = defaultdict(dict)  # kernels from earlier components
        self.work: list = []
        self.members: set = set()

    def merge(self, target: dict, origin, state: int) -> bool:
        """Union ``state`` into ``target[origin]``; whether it grew."""
        old = target.get(origin)
        new = state if old is None else self.cg.union(old, state)
        if new != old:
            target[origin] = new
            return True
        return False

    def add(self, chart: NFAChart, origin, state: int) -> None:
        """Add items to a chart of the current component, queueing them when new."""
        if self.merge(chart.entries, origin, state):
            self.work.append((chart, origin))

    def seed(self, start_symbol: Hashable) -> None:
        """Predict the start symbol in the start state's chart."""
        start = self.charts[self.nfa.start]
        start.wanted = frozenset([self.cg.sym_id[start_symbol]])
        self.pending[self.nfa.start][start] = self.cg.predicted(start.wanted)

    def component(self, comp: list[int]) -> None:
        """Close one component to a fixpoint, then export along its outgoing arrows."""
        self.members = set(comp)
        for q in comp:
            for origin, state in self.pending.pop(q, {}).items():
                self.add(self.charts[q], origin, state)
        while self.work:
            chart, origin = self.work.pop()
            state = chart.entries[origin]
            self.scan_within(chart, origin, state)
            self.complete(chart, origin, state)
            self.notify(chart, origin, state)
            self.predict(chart, state)
        for q in comp:
            self.export(self.charts[q])

    def scan_within(self, chart: NFAChart, origin, state: int) -> None:
        """Scanner: follow the chart's arrows inside the component (ε keeps the items)."""
        goto, charts = self.cg.goto, self.charts
        for label, q2 in self.nfa.edges[chart.q]:
            if q2 not in self.members:
                continue
            if label is None:
                self.add(charts[q2], origin, state)
                continue
            for t in label:
                ns = goto(state, t)
                if ns >= 0:
                    self.add(charts[q2], origin, ns)

    def complete(self, chart: NFAChart, origin, state: int) -> None:
        """Completer: step the origin's items over each finished nonterminal; an origin in
        this component may still grow, so it keeps a listener for later additions."""
        goto = self.cg.goto
        for a in self.cg.completed[state]:
            if (origin, a) in chart.done:
                continue
            chart.done.add((origin, a))
            if origin.q in self.members:
                origin.listeners[a].add(chart)
            for o2, s2 in list(origin.entries.items()):
                ns = goto(s2, a)
                if ns >= 0:
                    self.add(chart, o2, ns)

    def notify(self, chart: NFAChart, origin, state: int) -> None:
        """Items added to an origin late reach the charts that completed against it."""
        goto = self.cg.goto
        for a, targets in chart.listeners.items():
            ns = goto(state, a)
            if ns >= 0:
                for target in list(targets):
                    self.add(target, origin, ns)

    def predict(self, chart: NFAChart, state: int) -> None:
        """Predictor: the nonterminals the new items wait for, predicted once per chart."""
        more = self.cg.wants[state] - chart.wanted
        if more:
            chart.wanted |= more
            self.add(chart, chart, self.cg.predicted(chart.wanted))

    def export(self, chart: NFAChart) -> None:
        """Kernels along the arrows that leave the component (to ``pending``)."""
        goto = self.cg.goto
        for label, q2 in self.nfa.edges[chart.q]:
            if q2 in self.members:
                continue
            target = self.pending[q2]
            for origin, state in chart.entries.items():
                if label is None:
                    self.merge(target, origin, state)
                    continue
                for t in label:
                    ns = goto(state, t)
                    if ns >= 0:
                        self.merge(target, origin, ns)
