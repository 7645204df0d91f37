"""Chapter 5 (notebooks/05_perturbation.ipynb): ``noise`` runs it, ``prose`` writes its text."""
