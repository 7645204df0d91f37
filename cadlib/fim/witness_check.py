"""The soundness check of early rejection: CPython parses the witness of every accepted prefix.

For each cut ``left + middle + right`` and each variant of its middle (the true middle, and
seeded perturbations, several of them not completable: :data:`PERTURBATIONS`), the middle is
fed one character at a time; at every prefix the recognizer calls viable, :func:`witness
<cadlib.fim.witness.witness>` completes it and ``ast.parse`` must accept ``left + prefix +
witness + right``. A rejected witness is a *soundness failure* (the recognizer, or its
``can_end``, accepted what CPython does not). A viable prefix the search found no witness for
within its limit is counted apart (``no_witness``): it is not evidence either way. Feeding a
variant stops at its first dead prefix, which gets no witness.
"""

from __future__ import annotations

import random

import pandas as pd
from tqdm import tqdm

from .constraint import FIMConstraint, UnconnectableContextError
from .differential import python_accepts, random_edit
from .witness import witness

__all__ = ["PERTURBATIONS", "perturb", "witness_rows", "witness_check", "witness_summary"]

#: The middles checked per cut: the true middle and one seeded perturbation of each kind.
PERTURBATIONS = ("stray closer", "broken indentation", "unterminated literal", "random edit")


def perturb(middle: str, rng: random.Random, kind: str) -> str:
    """``middle`` with one seeded perturbation of ``kind`` (one of :data:`PERTURBATIONS`)."""
    i = rng.randrange(len(middle) + 1)
    if kind == "stray closer":
        return middle[:i] + rng.choice(")]}") + middle[i:]
    if kind == "unterminated literal":
        return middle[:i] + rng.choice(["'", '"', "'''", 'f"', "f'{"]) + middle[i:]
    if kind == "broken indentation":
        starts = [k + 1 for k, ch in enumerate(middle) if ch == "\n"]
        if not starts:
            return middle[:i] + "\n " + middle[i:]
        k = rng.choice(starts)
        if middle[k : k + 1] == " " and rng.random() < 0.5:
            return middle[:k] + middle[k + 1 :]
        return middle[:k] + rng.choice([" ", "\t", "  "]) + middle[k:]
    if kind == "random edit":
        return random_edit(middle, rng)[1]
    raise ValueError(f"unknown perturbation {kind!r}; use one of {PERTURBATIONS}")


#: Expansions of the state-only search before the hinted one (:func:`witness_rows`).
STATE_EXPANSIONS = 40


def _hints(true_middle: str, middle: str, i: int) -> tuple[str, ...]:
    """The rest of the true middle, aligned with prefix ``i`` of ``middle`` before and after
    the perturbation (which changed the length by ``len(middle) - len(true_middle)``)."""
    shift = len(middle) - len(true_middle)
    starts = sorted({j for j in (i, i - shift) if 0 <= j <= len(true_middle)})
    return tuple(true_middle[j:] for j in starts if true_middle[j:])


def witness_rows(
    c: FIMConstraint,
    middle: str,
    left: str,
    right: str,
    max_expansions: int = 200,
    true_middle: str | None = None,
) -> list[dict]:
    """One row per prefix of ``middle`` fed to ``c`` (not changed): ``prefix_chars``,
    ``viable``, ``witness`` (``None``: dead, or none found), ``source`` (``"state"``: the
    state-only search found it within :data:`STATE_EXPANSIONS`; ``"hinted"``: the search
    that also tries the rest of ``true_middle``) and ``parsed`` (CPython accepts the
    witnessed program; ``None`` without a witness). Stops after the first dead prefix."""
    state = c.fork()
    rows = []
    for i in range(len(middle) + 1):
        if i and not state.feed(middle[i - 1]):
            rows.append(dict(prefix_chars=i, viable=False, witness=None, source=None, parsed=None))
            break
        w, source = witness(state, max_expansions=STATE_EXPANSIONS), "state"
        if w is None and true_middle is not None:
            hints = _hints(true_middle, middle, i)
            w, source = witness(state, max_expansions=max_expansions, hints=hints), "hinted"
        parsed = None if w is None else python_accepts(left + middle[:i] + w + right)
        rows.append(
            dict(
                prefix_chars=i,
                viable=True,
                witness=w,
                source=None if w is None else source,
                parsed=parsed,
            )
        )
    return rows


def _variants(middle: str, rng: random.Random) -> list[tuple[str, str]]:
    return [("true middle", middle)] + [(k, perturb(middle, rng, k)) for k in PERTURBATIONS]


def witness_check(
    cuts: list[dict], seed: int = 0, max_expansions: int = 200, progress: bool = True
) -> pd.DataFrame:
    """The check over ``cuts`` (:func:`cadlib.fim.stdlib.stdlib_cuts`' dicts): one row per
    prefix of each variant, with the cut's ``file, a, b``, the ``variant`` and its middle."""
    rng = random.Random(f"witness:{seed}")
    rows: list[dict] = []
    for index, cut in enumerate(tqdm(cuts, disable=not progress, desc="witnesses")):
        left, right = cut["left"], cut["right"]
        variants = _variants(cut["middle"], rng)
        try:
            c = FIMConstraint(left, right)
        except UnconnectableContextError:
            continue  # the true middle's own differential row records it
        for variant, middle in variants:
            base = dict(cut=index, file=cut["file"], a=cut["a"], b=cut["b"], variant=variant)
            rows_ = witness_rows(c, middle, left, right, max_expansions, cut["middle"])
            for row in rows_:
                rows.append(dict(base, **row, middle=middle))
    return pd.DataFrame(rows)


def _example(frame: pd.DataFrame, row, cuts: list[dict]) -> dict:
    """A failure as its shortest failing prefix of the same middle, with the context's
    nearest lines (the left's last line, the right's first)."""
    same = frame[(frame.cut == row.cut) & (frame.variant == row.variant) & (frame.parsed == False)]  # noqa: E712
    first = same.iloc[0]
    cut = cuts[int(first.cut)]
    return dict(
        file=first.file,
        a=int(first.a),
        b=int(first.b),
        variant=first.variant,
        left_tail=cut["left"].rsplit("\n", 2)[-1][-80:],
        prefix=first.middle[: int(first.prefix_chars)][-80:],
        witness=first.witness,
        right_head=cut["right"].split("\n", 1)[0][:80],
    )


def witness_summary(frame: pd.DataFrame, cuts: list[dict]) -> dict:
    """Counts: prefixes checked (viable), witnesses found and parsed, soundness failures
    (one minimal example per failing middle), viable prefixes without a witness, dead
    prefixes; and the same per variant."""
    viable = frame[frame.viable]

    def counts(part: pd.DataFrame) -> dict:
        alive = part[part.viable]
        return {
            "prefixes_checked": int(len(alive)),
            "witnesses_found": int(alive.witness.notna().sum()),
            "found_from_state_alone": int((alive.source == "state").sum()),
            "witnesses_parsed": int((alive.parsed == True).sum()),  # noqa: E712
            "failures": int((alive.parsed == False).sum()),  # noqa: E712
            "no_witness": int(alive.witness.isna().sum()),
            "dead_prefixes": int((~part.viable).sum()),
        }

    failing = viable[viable.parsed == False].drop_duplicates(["cut", "variant"])  # noqa: E712
    return dict(
        counts(frame),
        cuts=int(frame.cut.nunique()) if len(frame) else 0,
        by_variant={v: counts(frame[frame.variant == v]) for v in frame.variant.unique()},
        failure_examples=[_example(frame, r, cuts) for r in failing.itertuples()],
    )
