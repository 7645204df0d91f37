"""``python -m cadlib.cli``: the ``cad`` command."""

from . import main

raise SystemExit(main())
