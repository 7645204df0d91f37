"""Chapter 5 (notebooks/05_perturbation.ipynb): how precise must span selection be? Oracle
programs under endpoint noise (paper §3, §5, Tables 8 and 4).

The noise model and the trial runner are :mod:`cadlib.endpoint_noise`; the roles split the
chapter as every chapter's (CONTRIBUTING, "A chapter package"): :mod:`.profiles`
(``PROFILES``), :mod:`.run` (the trials of every corpus, their summaries, Table 4, the endpoint
anchors and ``numbers``, the results dict), :mod:`.show` (tables and figures) and :mod:`.text`
(the generated prose).
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]

__getattr__ = lazy_roles(__name__)
