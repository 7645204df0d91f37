"""``python -m cadlib.probeedit``: write the corpus as JSONL and/or print its statistics."""

import sys

from .corpus import main

sys.exit(main())
