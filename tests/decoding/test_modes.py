"""The decoder's modes as policy objects (no model): which mode a decode gets, what each keeps
of the model's argmax, how agreement is counted and what the forced mode refuses."""

from types import SimpleNamespace

import pytest

from cadlib.decoding.fsm import token_table, transcript
from cadlib.decoding.modes import Forced, FreeRun, Localized, decode_mode
from cadlib.oracle import oracle_program

DOC = "a = 1\nb = 2\nc = 3\n"
GOLD = "a = 1\nb = 20\nc = 3\n"


def _run(ids=(), decisions=0, agree=0):
    return SimpleNamespace(ids=list(ids), decisions=decisions, agree=agree)


def test_the_mode_follows_the_arguments(tok):
    program = oracle_program(DOC, GOLD)
    plan = transcript(program, DOC, token_table(tok))
    assert type(decode_mode(None, None, DOC, False, None, 8)) is FreeRun
    forced = decode_mode(plan, program, DOC, False, None, 8)
    assert type(forced) is Forced and forced.plan == plan.ids
    local = decode_mode(plan, program, DOC, True, None, 8)
    assert type(local) is Localized and local.plan == plan.ids and not local.body_open()


def test_free_run_keeps_the_models_id_and_counts_no_agreement():
    mode = FreeRun(budget=3)
    run = _run(decisions=2)
    assert mode.pick(7, run) == 7 and mode.agreement(run) is None and mode.processors == []
    assert mode.before_forward(None, "state", run, [], []) == ("state", None)  # under budget
    mode.check((1, 2, 3))  # a free run promises no transcript


def test_forced_mode_takes_the_programs_id_and_counts_agreement():
    mode = Forced(plan=(10, 11, 12), budget=1)
    run = _run(ids=[10], decisions=5)
    assert mode.before_forward(None, "s", run, [], []) == ("s", None)  # no budget when forced
    assert mode.pick(11, run) == 11 and run.agree == 1
    run.ids.append(11)
    assert mode.pick(99, run) == 12 and run.agree == 1  # the model disagreed: the plan wins
    run.decisions = 2
    assert mode.agreement(run) == 0.5
    mode.check((10, 11, 12))
    with pytest.raises(RuntimeError, match="left the program's transcript"):
        mode.check((10, 11, 13))
