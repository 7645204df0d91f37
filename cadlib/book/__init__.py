"""The book's pages: what reads every chapter's results and says what they show.

``paper_settings`` (the settings the ``paper`` profiles follow), ``rerun_check`` (a re-run
against the committed numbers, with declared tolerances), ``reproduction`` (the report
``make book`` writes), ``verdicts``, ``coverage``, ``summary/`` (the summary page) and
``figures`` (the book's static figures). The pages name no chapter: what they read of one (its
summary rows, re-run tolerances, coverage rows, paper settings) is declared in the chapter's
``headlines`` module, in the vocabulary defined here, and collected in book order through
:func:`cadlib.chapters.chapter_values`. What a chapter runs and writes with is
:mod:`cadlib.record`, the floor below.
"""
