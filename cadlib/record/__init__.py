"""The bottom floor of the book: what every chapter and wing uses to run, record and show a
measurement, and nothing that reads a page.

``params`` (a chapter's profiles and parameters), ``session`` (how a chapter starts and writes
its results), ``results`` (``results/<chapter>[.<profile>].json`` and the machine it names),
``provenance`` (commit and load of a run), ``replay`` (measure once, replay always) and
``style`` (one plot style for the book). The pages that read these files are :mod:`cadlib.book`.
"""
