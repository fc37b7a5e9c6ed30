"""H statistics of tree ensembles from the trees (filled in below)."""
