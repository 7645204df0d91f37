"""The book's pages: what reads every chapter's results and says what they show.

``paper_settings`` (the settings the ``paper`` profiles follow), ``rerun_check`` (a re-run
against the committed numbers, with declared tolerances), ``reproduction`` (the report
``make book`` writes), ``verdicts``, ``coverage``, ``summary/`` (the summary page) and
``figures`` (the book's static figures). What a chapter runs and writes with is
:mod:`cadlib.record`, the floor below.
"""
