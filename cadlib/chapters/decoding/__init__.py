"""Chapter 6 (notebooks/06_decoding.ipynb): ``measure`` times the methods, ``chapter`` runs the
chapter and writes its results, ``report`` shows them."""
