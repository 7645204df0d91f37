"""Chapter 8 (notebooks/08_fim_constraint.ipynb): the FIM constraint of ``cadlib.fim`` measured.

``experiments`` (the chapter's profiles and runs), ``report`` (tables and results numbers),
``conclusion`` (the evidence run's paired tests and the generated conclusion), ``figures``,
``stdlib_view`` (the standard-library differential's sample, committed runs and cost figure)
and ``maskspeed`` (the mask-speed run against its goals).
"""
