"""One module or package per chapter of the book, named after its notebook.

``losslessness`` and ``portability`` (1), ``kernel`` (2), ``ceiling`` (3), ``formats`` (4),
``perturbation`` (5), ``decoding`` (6: ``measure``, the run; ``report``, what the notebook
shows), ``llama_cpp`` (6b), ``kv_reuse`` (6c), ``sft_pilot`` (7), ``fim_constraint`` (8) and
``gpu_check`` (chapters 2 and 6 on a GPU, ``make gpu-check``). Each holds the chapter's
``PROFILES``, its run, tables, figures and generated text; the mechanisms they measure live in
the wings below (``cadlib.decoding``, ``cadlib.costs``, ``cadlib.fim``).
"""
