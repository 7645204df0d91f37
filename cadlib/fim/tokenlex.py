"""Token-level lexing for the allowed-token mask: what each token asks of the parser.

The branching lexer's step (:meth:`cadlib.fim.branching.BranchingLexer.step`) depends on a
branch's Earley chart and line state only through five *operations*: "the chart can still scan
this symbol in progress" (``sip_viable``), "scan this ended symbol" (``emit``), whitespace
(the column, at a line start), a newline (NEWLINE at depth 0) and the first symbol of a line
(INDENT/DEDENT). The rest — the lexeme automaton, branch guards, number follow sets — is
lexical. So for one *lexical key* ``(sip, guards, follow, at_line_start)`` (a branch without its
chart and line), the vocabulary's character trie (:class:`cadlib.fim.mask.TokenTrie`) is walked
symbolically: a symbolic branch carries, instead of a chart, a node of an *operation trie* (the
operations applied so far), and each token is filed under the nodes its symbolic branches end
at. A token keeps a real branch viable exactly when one of its nodes' operation paths succeeds
on the branch's ``(chart, line)`` (the branches of a state are stepped independently, so a
state's mask is the union of its branches'). A mask is then a walk over the operation trie
(hundreds of nodes, each a memoised scan or set test) instead of the character trie.

* A check repeats nothing: one per reach set of the symbol in progress (all ``sip_viable``
  looks at), none for a reach set already checked on the same chart, so the characters inside a
  name, number or string add no operation (whole trie subtrees are filed at once, as the
  absorbed ranges of :meth:`~cadlib.fim.mask.TokenTrie._absorbed`).
* The tables are chart-free, so every constraint and decoding step shares them, and keys
  share tables by *routing* first characters (:func:`_route`): a key whose symbol in progress
  simply ends before a token's first character (``"("`` then anything, a name then ``" "``)
  hands those tokens to the table of the symbol boundary after it, with the ended symbol
  scanned first; a keyword prefix hands the tokens that make it a plain name (``"ret"`` then
  ``"x"``) to the plain name's table, after its check. :meth:`LexTables.allowed` evaluates
  those tables too and keeps their tokens by first character.
* A table grows lazily, driven by the charts it is evaluated on: a trie subtree whose operation
  nodes all fail on the chart at hand is *deferred* at those nodes and walked only when a later
  chart makes one of them succeed, so the first evaluation costs about one walk of the trie
  from that state, later ones only the operations (and the same chart asked again, as inside a
  name or string, reuses the answer).

The operations are replayed with the lexer's own methods (``sip_viable``, ``emit``,
``indentation``, the recognizer's ``scan``) and :func:`_apply` mirrors the few lines of
``BranchingLexer._boundary`` that change the line, so a mask equals feeding every token on its
own (:func:`cadlib.fim.mask.naive_allowed_mask`, the tests' oracle).
"""

from __future__ import annotations

import functools

import numpy as np

from .branching import advance_lookahead
from .indent import advance_column
from .lexer import IGNORE, dfa, is_id_continue, number_follow
from .literals import NUMBER_TERMINALS

__all__ = ["LexTable", "LexTables", "char_bit", "sip_absorbing"]

_NON_ASCII_ID, _NON_ASCII_OTHER = 128, 129
_WHITESPACE = frozenset(" \t\f\r")
_SPACE_BITS = sum(1 << ord(c) for c in _WHITESPACE)
# operation kinds of the operation trie (node 0, the root, has none)
_CHECK, _EMIT, _WS, _NL, _START = range(5)
_REPRESENTATIVE: dict = {}  # reach set -> a symbol-in-progress state with it (for sip_viable)
_MISSING = object()


def char_bit(ch: str) -> int:
    """One bit per ASCII character, one for non-ASCII identifier characters, one for others."""
    o = ord(ch)
    if o < 128:
        return 1 << o
    return 1 << (_NON_ASCII_ID if is_id_continue(ch) else _NON_ASCII_OTHER)


@functools.cache
def sip_absorbing(sip: int) -> int:
    """The bits (:func:`char_bit`) of the characters that leave a symbol in progress unchanged.

    The automaton treats non-ASCII characters alike up to identifier-ness, so a few
    representatives decide the two non-ASCII bits exactly.
    """

    def test(ch, sip=sip):
        return dfa.step(sip, ch) == sip

    bits = sum(1 << o for o in range(128) if test(chr(o)))
    if all(test(ch) for ch in "éßπ中文"):
        bits |= 1 << _NON_ASCII_ID
    if all(test(ch) for ch in "€→…—“"):
        bits |= 1 << _NON_ASCII_OTHER
    return bits


_BOUNDARY = 0  # route of a first character that simply ends the symbol in progress


def _route(key: tuple, ch: str) -> int | None:
    """Where the tokens starting with ``ch`` are looked up for a lexical key (``None``: its
    own table). :data:`_BOUNDARY`: ``ch`` ends the symbol with no longer one pending and no
    number follow set, so the branch goes on as at a symbol boundary after the ended symbol;
    a symbol-in-progress state ``s``: ``ch`` moves to ``s``, which keeps ``ch`` (``"ret"`` +
    ``"x"`` is any name), so the branch goes on as ``s``'s table from its root. Not for a
    comment's end (the boundary table would evaluate every token only to drop it)."""
    sip, guards, follow, _ = key
    if not sip or follow:
        return None
    nxt = dfa.step(sip, ch)
    names = dfa.accept[sip]
    if nxt < 0:
        simple = names is not None and (names[0] not in NUMBER_TERMINALS or number_follow(ch) == ())
        return _BOUNDARY if simple and dfa.descs[sip][0] != "comment" else None
    if guards or nxt == sip or dfa.step(nxt, ch) != nxt:
        return None
    ends = names is not None and dfa.accept[nxt] is None and not dfa.commit[nxt]
    return None if ends else nxt


class LexTables:
    """The :class:`LexTable` of each lexical key over one trie, and the mask's evaluation."""

    def __init__(self, trie):
        self.trie = trie
        self.tables: dict = {}
        self._keep: dict = {}

    def table(self, key: tuple, after_name: bool = False) -> LexTable:
        """The table of a lexical key (``after_name``: a boundary table for the tokens a name
        hands over, which never start with an identifier character)."""
        got = self.tables.get((key, after_name))
        if got is None or got.broken:
            got = self.tables[key, after_name] = LexTable(self.trie, key, after_name)
        return got

    def allowed(self, lexer, branches: list) -> list:
        """``[(token id arrays, keep)]``: the tokens allowed by each branch's table and by the
        tables it routes first characters to (:func:`_route`); ``keep`` (a boolean mask over
        token ids, or ``None``) restricts the latter to the first characters routed there."""
        parts = []
        for chart, sip, guards, follow, line, _ in branches:
            key = (sip, guards, follow, line[1])
            own = self.table(key)
            parts.append((own.allowed(lexer, chart, line), None))
            for route in own.routes:
                if route == _BOUNDARY:
                    names = dfa.accept[sip]
                    got = (chart, line) if names is IGNORE else lexer.emit(chart, line, names)
                    after = (0, guards, (), line[1]), dfa.descs[sip][0] == "name"
                elif lexer.sip_viable(route, chart):
                    got, after = (chart, line), ((route, (), (), line[1]), False)
                else:
                    continue
                if got is not None:
                    arrays = self.table(*after).allowed(lexer, *got)
                    parts.append((arrays, self._kept(key, route)))
        return parts

    def _kept(self, key: tuple, route: int) -> np.ndarray:
        """The tokens whose first character ``key`` routes to ``route``."""
        k = (key[0], bool(key[1]), route)  # all that _route looks at (follow is empty)
        got = self._keep.get(k)
        if got is None:
            trie = self.trie
            got = self._keep[k] = np.zeros(trie.size, dtype=bool)
            for ch, child in trie.children[0]:
                if _route(key, ch) == route:
                    got[trie.order[trie.lo[child] : trie.hi[child]]] = True
        return got


class LexTable:
    """The operation trie of one lexical key (see the module docstring).

    Symbolic branches are ``(node, sip, guards, follow, bol)``: ``node`` the operation-trie
    node, ``bol`` whether the line has no symbol yet (``None``: unknown, after a newline that
    may be inside brackets). Node ``i`` has ``op[i]`` (``(kind, argument)``), ``parent[i]``,
    ``kids[i]``, the tokens ending there (``ranges`` of the trie's order, ``singles``) and the
    trie nodes ``deferred`` there. Its walk skips the first characters that the key routes
    to other tables (``routes``, :func:`_route`); a boundary table ``after_name`` skips
    identifier characters.
    """

    def __init__(self, trie, key: tuple, after_name: bool = False):
        self.trie = trie
        sip, guards, follow, bol = key
        self.key, self.after_name = key, after_name
        routes = {_route(key, ch) for ch, _ in trie.children[0]} if sip and not follow else ()
        self.routes = sorted(set(routes) - {None})
        self.op: list = [None]
        self.parent = [-1]
        self.kids: list[list] = [[]]
        # reach sets checked since the last operation that may change the chart: the key's
        # symbol in progress was checked on the branch's chart when the branch was made
        self.checked: list[frozenset] = [frozenset([dfa.reach[sip]]) if sip else frozenset()]
        self.singles: list[list] = [[]]
        self.ranges: list[list] = [[]]
        self.arrays: list = [None]
        self.deferred: list[list] = [[0]]
        self._child: dict = {}
        self.states: dict = {}  # symbolic state (tuple of branches) -> (absorbing bits, memo)
        root = ((0, sip, guards, follow, bol),)
        self._intern(root)
        self.at = {0: root}  # deferred trie node -> its symbolic state
        self._visited: set | None = None  # the evaluation in progress (see allowed)
        self.broken = False  # an evaluation was interrupted mid-walk: rebuild the table
        self.walks = 0  # how often the table grew
        self._last: tuple = (None, None, -1, [])  # (chart, line, walks, answer)
        self._stack: list = []

    # ----- the operation trie ----------------------------------------------------------------

    def _node(self, parent: int, op: tuple) -> int:
        """The child of ``parent`` for ``op`` (created once; pushed on the evaluation in
        progress when ``parent`` is already known to succeed)."""
        k = (parent, op)
        got = self._child.get(k)
        if got is None:
            got = self._child[k] = len(self.op)
            self.op.append(op)
            self.parent.append(parent)
            self.kids.append([])
            self.kids[parent].append(got)
            keeps_chart = op[0] in (_CHECK, _WS)
            self.checked.append(self.checked[parent] if keeps_chart else frozenset())
            self.singles.append([])
            self.ranges.append([])
            self.arrays.append(None)
            self.deferred.append([])
            if self._visited is not None and parent in self._visited:
                self._stack.append(got)
        return got

    def _check(self, node: int, sip: int) -> int:
        """``node`` followed by "the chart can still scan ``sip``" (nothing when known)."""
        reach = dfa.reach[sip]
        if reach is IGNORE or reach in self.checked[node]:
            return node
        got = self._node(node, (_CHECK, _REPRESENTATIVE.setdefault(reach, sip)))
        self.checked[got] = self.checked[node] | {reach}
        return got

    # ----- the symbolic step (mirrors BranchingLexer.step and _boundary) ---------------------

    def _step(self, branches: tuple, ch: str) -> tuple:
        """The symbolic branches after ``ch`` (duplicates dropped: viability is "any")."""
        out: list = []
        step, accept, commit = dfa.step, dfa.accept, dfa.commit
        for node, sip, guards, follow, bol in branches:
            if guards or follow:
                ahead = advance_lookahead(guards, follow, ch)
                if ahead is None:
                    continue
                guards, follow = ahead
            if not sip:
                self._boundary(out, node, guards, follow, bol, ch)
                continue
            nxt = step(sip, ch)
            if nxt >= 0:
                out.append((self._check(node, nxt), nxt, guards, follow, bol))
            names = accept[sip]
            if names is None or (nxt >= 0 and (accept[nxt] is not None or commit[nxt])):
                continue
            new_follow = number_follow(ch) if names[0] in NUMBER_TERMINALS else ()
            if new_follow is None:
                continue
            if names is not IGNORE:
                node = self._node(node, (_EMIT, names))
            new_guards = guards + (nxt,) if nxt >= 0 else guards
            self._boundary(out, node, new_guards, new_follow, bol, ch)
        return tuple(dict.fromkeys(out))

    def _boundary(self, out: list, node: int, guards: tuple, follow: tuple, bol, ch: str):
        """``ch`` at a symbol boundary; whitespace mid-line and a comment or ``\\`` at a line
        start leave the line as it is, so they add no operation."""
        if ch in _WHITESPACE:
            if bol is not False:
                node = self._node(node, (_WS, ch))
            out.append((node, 0, guards, follow, bol))
            return
        if ch == "\n":
            out.append((self._node(node, (_NL, None)), 0, guards, follow, bol or None))
            return
        sip = dfa.step(0, ch)
        if sip < 0:
            return
        if ch != "#" and bol is not False:
            node, bol = self._node(node, (_START, None)), False
        out.append((self._check(node, sip), sip, guards, follow, bol))

    def _intern(self, state: tuple) -> tuple:
        got = self.states.get(state)
        if got is None:
            got = self.states[state] = (self._absorbing(state), {})
        return got

    def _absorbing(self, state: tuple) -> int | None:
        """Bits of the characters that leave ``state`` as it is (``None``: none do): inside a
        symbol already checked on this chart, or spaces mid-line."""
        if len(state) != 1:
            return None
        node, sip, guards, follow, bol = state[0]
        if guards or follow:
            return None
        if sip:
            reach = dfa.reach[sip]
            checked = reach is IGNORE or reach in self.checked[node]
            return (sip_absorbing(sip) or None) if checked else None
        return _SPACE_BITS if bol is False else None

    # ----- evaluation on a real branch, walking what it needs --------------------------------

    def allowed(self, lexer, chart, line) -> list:
        """The arrays of token ids that keep the branch ``(chart, line)`` of this key viable
        and do not start with a routed character: the tokens of every operation node whose
        path succeeds, after walking the trie subtrees deferred at those nodes. The last
        answer is reused for the same chart and line unless the table grew since (decoding
        inside a name, string or comment asks again with the same chart)."""
        last = self._last
        if last[0] is chart and last[1] == line and last[2] == self.walks:
            return last[3]
        self._visited, self._stack = set(), [0]
        try:
            alive = self._evaluate(lexer, {0: (chart, line)})
        except BaseException:
            self.broken = True
            raise
        finally:
            self._visited, self._stack = None, []
        out = []
        arrays = self.arrays
        for n in alive:
            arr = arrays[n]
            if arr is None:
                arr = arrays[n] = self._array(n)
            if len(arr):
                out.append(arr)
        self._last = (chart, line, self.walks, out)
        return out

    def _evaluate(self, lexer, vals: dict) -> list:
        """The nodes that succeed, depth-first from the root (a node is popped only when its
        parent succeeded, so its value is one operation away); deferred subtrees below them
        are walked, and the nodes this creates below visited ones are pushed as they come."""
        op, parent, kids, deferred = self.op, self.parent, self.kids, self.deferred
        visited, stack = self._visited, self._stack
        sip_viable = lexer.sip_viable
        alive = []
        while stack:
            n = stack.pop()
            v = vals.get(n, _MISSING)
            if v is _MISSING:
                v = vals[parent[n]]
                kind, arg = op[n]
                if kind == _CHECK:  # the most common operation, inlined
                    ok = v[0].viable.get(arg)
                    if not (ok or ok is None and sip_viable(arg, v[0])):
                        v = None
                else:
                    v = _apply(op[n], v, lexer)
                vals[n] = v
            if v is None:
                continue
            visited.add(n)
            alive.append(n)
            stack.extend(kids[n])
            if deferred[n]:
                todo, deferred[n] = deferred[n], []
                at = self.at
                self._walk([(t, at.pop(t)) for t in todo if t in at], vals, lexer)
        return alive

    def _array(self, n: int) -> np.ndarray:
        """The token ids filed under node ``n``."""
        order = self.trie.order
        parts = [order[lo:hi] for lo, hi in self.ranges[n]]
        parts.append(np.array(self.singles[n], dtype=np.int64))
        return np.concatenate(parts)

    def _value(self, n: int, vals: dict, lexer):
        """``(chart, line)`` after node ``n``'s operations, ``None`` if one fails (memoised
        in ``vals`` for one evaluation)."""
        got = vals.get(n, _MISSING)
        if got is not _MISSING:
            return got
        path = [n]
        while (got := vals.get(self.parent[path[-1]], _MISSING)) is _MISSING:
            path.append(self.parent[path[-1]])
        for m in reversed(path):
            if got is not None:
                got = _apply(self.op[m], got, lexer)
            vals[m] = got
        return got

    def _walk(self, work: list, vals: dict, lexer) -> None:
        """The symbolic walk below ``(trie node, state)`` items: tokens are filed under the
        operation nodes they end at; a subtree whose nodes all fail now is deferred."""
        edges, absorbed = self.trie.edges, self.trie._absorbed
        self.walks += 1
        while work:
            t, state = work.pop()
            bits, memo = self.states[state]
            if bits is None:
                out = edges[t]
            else:
                a_lo, a_hi, a_singles, out = absorbed(t, bits)
                self._file(state[0][0], zip(a_lo, a_hi, strict=True), a_singles)
            if t == 0 and (self.routes or self.after_name):
                out = self._root_edges(out)
            for ch, _, kids in out:
                nxt = memo.get(ch)
                if nxt is None:
                    nxt = memo[ch] = self._step(state, ch)
                    if nxt:
                        self._intern(nxt)
                if nxt:
                    self._branch_out(work, kids, nxt, vals, lexer)

    def _root_edges(self, out: list) -> list:
        """The root's outgoing edges ``(char, bit, children)`` less the first characters
        that this table leaves to another (an absorbed frontier also holds deeper
        children)."""
        first = dict(self.trie.children[0])
        kept = []
        for ch, cbit, kids in out:
            if is_id_continue(ch) if self.after_name else _route(self.key, ch) is not None:
                kids = tuple(k for k in kids if k != first.get(ch))
            if kids:
                kept.append((ch, cbit, kids))
        return kept

    def _branch_out(self, work: list, kids: tuple, state: tuple, vals: dict, lexer) -> None:
        """File the tokens of trie nodes ``kids`` (reached in ``state``) and walk on below
        them now, or defer them at ``state``'s nodes when those all fail on this chart."""
        trie = self.trie
        nodes = {b[0] for b in state}
        for child in kids:
            if trie.ends[child]:
                for n in nodes:
                    self._file(n, (), trie.ends[child])
            if not trie.children[child]:
                continue
            if any(self._value(n, vals, lexer) is not None for n in nodes):
                work.append((child, state))
            else:
                self.at[child] = state
                for n in nodes:
                    self.deferred[n].append(child)

    def _file(self, n: int, ranges, singles) -> None:
        """Add tokens (trie-order ranges, single ids) to node ``n``."""
        self.ranges[n].extend(ranges)
        self.singles[n].extend(singles)
        self.arrays[n] = None


def _apply(op: tuple, value: tuple, lexer):
    """One operation on ``(chart, line)``, as ``BranchingLexer.step`` performs it; ``None``:
    the branch dies."""
    kind, arg = op
    chart, line = value
    if kind == _CHECK:
        return value if lexer.sip_viable(arg, chart) else None
    if kind == _EMIT:
        return lexer.emit(chart, line, arg)
    depth, bol, col, alt, stack = line
    if kind == _WS:
        return (chart, (depth, bol, *advance_column(col, alt, arg), stack)) if bol else value
    if kind == _NL:
        if depth:
            return value
        if not bol:
            chart = lexer.rec.scan(chart, lexer.newline)
            if chart is None:
                return None
        return chart, (0, True, 0, 0, stack)
    if not bol or depth:  # _START: the first symbol of a logical line
        return value
    done = lexer.indentation(chart, col, alt, stack)
    return None if done is None else (done[0], (0, False, 0, 0, done[1]))
