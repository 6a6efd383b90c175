"""The experiment behind card 5 (`posecards measure`): small causal transformers, one per position
scheme and seed, trained on CPU at one length and evaluated at 1x, 2x, 4x and 8x that length.

- ``task``: the synthetic language (numpy): each token depends only on the token two back.
- ``positions``: the position code of every scheme, from posecards' math layer (numpy, float64).
- ``model`` / ``train``: the transformer and its training and evaluation (torch, imported only here).
- ``run``: the runs in parallel processes and the results file (JSON).

Nothing here is imported by the cards: card 5 reads the results file.
"""
