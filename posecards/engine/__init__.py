"""The one build engine of `posecards build`, `deck` and `inspect` (and of every ``--check``).

It knows nothing of cards or slides. A command makes a plan (posecards.engine.units.Plan: the
units of work, their inputs and the files each makes) and runs it:

- ``units``: Unit (name, declared inputs, recipe, render -> Rendered files), Plan;
- ``inputs``: what outputs are made from (code, style, templates, texts, library versions);
- ``unitcache``: the content-addressed cache of rendered units;
- ``executor``: cache look-ups, a pool of fresh processes (one per unit), progress as units finish,
  outputs in a deterministic order, the manifest;
- ``manifest``: one manifest.json schema;
- ``judge``: ``--check`` (every hash) and the up-to-date test of a rebuild (sizes and times,
  a hash only where they moved);
- ``site``: the atomic writer of an output folder, and its lock.

Nothing here imports numpy, matplotlib or anything of the layers above.
"""
