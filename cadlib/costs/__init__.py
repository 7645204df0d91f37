"""The costs wing: what a decode costs, counted and priced without running the decoder.

``spans`` (a case's line-level copy spans, Table 2), ``speedup_curve`` (the kernel's s(N):
load, interpolate, label), ``bounds`` (the speedup bounds a cover and a curve give, Table 2),
``kernel_timing`` (the s(N) sweep and its two timers, on any engine), ``method_timing``
(decoding methods timed interleaved on engines), ``accounting`` (exact forward counts
along a known output, every method: ``accounting.forwards`` per output, ``accounting.corpora``
per corpus), ``forward_grid`` (the measured seconds of one forward by ids and context),
``cost_model`` (the accounted forwards priced on that grid), ``thread_bench`` (``cad
edit``'s default threads against one, on a quiet and a busy machine) and ``heldout_report``
(reading a part of chapter 6's held-out speed run: chapters 6 and 6b show it).
"""
