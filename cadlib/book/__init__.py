"""The book's own machinery: profiles, results files, evidence and the pages that read them.

``params`` (a chapter's profiles and parameters), ``paper_settings`` (the settings the
``paper`` profiles follow), ``results`` (``results/<chapter>[.<profile>].json``),
``provenance`` (commit and load of a run), ``replay`` (measure once, replay always),
``rerun_check`` (a re-run against the committed numbers, with declared tolerances),
``reproduction`` (the report ``make book`` writes), ``verdicts``, ``coverage`` and
``summary/`` (the summary page), and ``plotting`` (one plot style for the book).
"""
