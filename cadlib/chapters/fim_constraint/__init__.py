"""Chapter 8 (notebooks/08_fim_constraint.ipynb): the FIM constraint of ``cadlib.fim`` measured.

Does the quotient-grammar constraint make ``<gen>`` bodies and FIM completions end where the
file parses? The roles: ``card`` (``CARD``), ``profiles`` (``PROFILES``), ``run`` (the session,
the validity counts and the one results dict, ``numbers``), ``run_edits`` (constrained
``<gen>`` bodies in localized edits, ``GenBodyMask``), ``run_costs`` (costs per token),
``run_evidence`` (the committed evidence runs read back, the large run's paired tests),
``show_anchors`` (the published mask engines beside ours, labelled by what each supports),
``show`` / ``show_figures`` / ``show_stdlib`` (tables and figures), ``text`` / ``text_stdlib``
(the generated prose, ``answer`` among it) and ``commands`` (``python -m
cadlib.chapters.fim_constraint.commands stdlib|maskspeed``: the evidence runs of the
``cadlib.fim`` wing).
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]
__getattr__ = lazy_roles(__name__)
