"""torch on one thread for a block, the caller's thread count given back afterwards.

posecards' torch work is small tensors (a probe's frequencies and six tokens, 300 x 300 bucket
grids, the measure command's tiny models): with torch's default of a thread per core, the other
threads mostly spin waiting for work (umt5's 16 bias grids: 0.74-1.33 CPU s on two threads at
load 8, 0.09-0.11 s on one; a 250-step recall training: about 20 CPU s against 3). The model
reading's ops are elementwise or integer, the same bits on any number of threads; the measure
command trains on one thread by design (its determinism is checked on one).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """``torch.set_num_threads(1)`` inside the block; the count it found, restored after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
