"""One module or package per chapter of the book, named after its notebook.

``losslessness`` and ``portability`` (1), ``kernel`` (2), ``ceiling`` (3), ``formats`` (4),
``perturbation`` (5), ``decoding`` (6: ``measure``, the run; ``report``, what the notebook
shows), ``llama_cpp`` (6b), ``kv_reuse`` (6c), ``sft_pilot`` (7) and ``fim_constraint`` (8).
Each holds the chapter's ``PROFILES``, its run, tables, figures and generated text, and imports
no other chapter: what two chapters share lives below them (the wings ``cadlib.decoding``,
``cadlib.costs``, ``cadlib.fim``, or the top level: ``cadlib.metrics``' paired tests,
``cadlib.corpora``' held-out split, ``cadlib.endpoint_noise``). The GPU check, which runs
chapters 2 and 6 on a GPU (``make gpu-check``), is a shell command: :mod:`cadlib.cli.gpu_check`.
"""
