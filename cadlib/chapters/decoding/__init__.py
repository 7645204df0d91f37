"""Chapter 6 (notebooks/06_decoding.ipynb): ``measure`` runs it, ``report`` shows it."""
