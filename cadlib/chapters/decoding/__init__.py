"""Chapter 6 (notebooks/06_decoding.ipynb): the decoder measured end to end, against
autoregressive decoding and prompt lookup on the same outputs, against its bound, and counted
on every case.

``profiles`` holds its runs' settings; ``run`` sets up the model and cases and builds the
results file's numbers from the run's topics: ``run_timing`` (the timed sample, priced on the
forward-cost grid measured around it), ``run_accounting`` (the exact forwards of every case,
no model), ``run_free`` (the untrained model decoding freely), ``run_costs`` (Appendix H's
fixed costs and the FSM's mask cost) and ``run_goals`` (issue 17's goals, judged on the run).
``show`` holds the tables and figures; ``text`` and ``text_goals`` the generated prose (the
Answer, the summaries the conclusion cites, the goals and why one was missed). The cost model
and the accounting themselves are the costs wing's (:mod:`cadlib.costs.cost_model`,
:mod:`cadlib.costs.accounting`).
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]

__getattr__ = lazy_roles(__name__)
