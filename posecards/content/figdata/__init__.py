"""The data of each figure of cards 1-7: one frozen dataclass per figure (typed, so mypy sees a
renamed field), computed by posecards/content/cardN.py, drawn by posecards/figures/cardN.py, exported
field by field, in order, by `posecards data ID`."""
