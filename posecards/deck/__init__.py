"""The lecture deck (`posecards deck`): one slide per panel, speaker notes, PDF, animations.

- ``notes.py``   the deck's text (``cards/deck.toml``): slide titles and speaker notes, English
                 and Chinese side by side, numbers as the cards' ``{{ placeholders }}``.
- ``frames.py``  the per-frame data of the animations, computed by the math layer (content role:
                 no plotting).
- ``plan.py``    which slides, in which order, with which titles and notes.
- ``draw.py``    the slide pictures and animation frames (matplotlib, draws only).
- ``pptx.py``    the PowerPoint writer (python-pptx), byte-deterministic.
- ``pdf.py``     the PDF deck: the slides' vector pages merged into one file (pypdf).
- ``build.py``   units, build cache, outputs (the same engine as ``posecards build``).
"""
