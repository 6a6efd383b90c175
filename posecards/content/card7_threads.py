"""The threads card 7 cites (``owner/repo#number``, all read; their titles and what they say are
in docs/pitfalls.md): per panel, each with its class (a bug that shipped, a question, a related
thread), and the card's two side pitfalls."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from posecards.content import Scalar


class ThreadKind(StrEnum):
    """What a cited thread shows, read in full (docs/pitfalls.md, column "class")."""

    SHIPPED = "shipped"  # the panel's mistake in code people ran (a bug report or its fix)
    QUESTION = "question"  # a question or an explanation: nothing was broken
    RELATED = "related"  # another bug, or the same area but not the panel's mechanism


# Where each pitfall bit (read, titles in docs/pitfalls.md), bugs that shipped first. The card
# shows the first two shipped ones of a panel; the card page, `posecards data` and the deck notes
# give all of them, each under its class (THREAD_KIND).
THREADS: dict[str, tuple[str, ...]] = {
    "c7-layout": (
        "karpathy/llama2.c#286",
        "huggingface/transformers#25199",
        "huggingface/transformers#31859",
        "huggingface/transformers#40462",
        "Dao-AILab/flash-attention#288",
        "ggml-org/llama.cpp#3018",
    ),
    "c7-precision": (
        "EleutherAI/gpt-neox#1003",
        "huggingface/transformers#29285",
        "huggingface/transformers#29496",
        "EleutherAI/gpt-neox#1016",
        "NVIDIA/Megatron-LM#535",
    ),
    "c7-alibi": (
        "ml-explore/mlx#343",
        "ml-explore/mlx#3071",
        "baichuan-inc/Baichuan2#225",
        "huggingface/transformers#28380",
    ),
    "c7-yarn": (
        "sgl-project/sglang#22711",
        "onnxruntime/mobius#548",
        "NVIDIA/Megatron-LM#1429",
    ),
    "c7-dynamic": (
        "huggingface/transformers#25306",
        "vllm-project/vllm#3488",
        "vllm-project/vllm#5093",
        "huggingface/transformers#25104",
    ),
    "c7-position-ids": (
        "huggingface/transformers#48161",
        "ndif-team/nnsight#673",
        "unslothai/unsloth#3699",
    ),
}
_S, _Q, _R = ThreadKind.SHIPPED, ThreadKind.QUESTION, ThreadKind.RELATED
THREAD_KIND: dict[str, ThreadKind] = {
    "karpathy/llama2.c#286": _S,  # HF-permuted weights exported without undoing it: gibberish
    "huggingface/transformers#25199": _Q,  # why do the two layouts agree? (the permutation)
    "huggingface/transformers#31859": _Q,  # the same question, closed as a duplicate
    "huggingface/transformers#40462": _Q,  # should torch.cat be repeat_interleave? (no)
    "Dao-AILab/flash-attention#288": _Q,  # interleaved or not? (depends on the weights)
    "ggml-org/llama.cpp#3018": _R,  # a GQA permutation bug in convert.py: another bug
    "EleutherAI/gpt-neox#1003": _S,
    "huggingface/transformers#29285": _S,
    "huggingface/transformers#29496": _S,
    "EleutherAI/gpt-neox#1016": _S,
    "NVIDIA/Megatron-LM#535": _S,
    "ml-explore/mlx#343": _S,
    "ml-explore/mlx#3071": _S,
    "baichuan-inc/Baichuan2#225": _Q,  # is the workaround intentional? (it is what was trained)
    "huggingface/transformers#28380": _R,  # MPT: a shape error, not wrong slopes
    "sgl-project/sglang#22711": _S,
    "onnxruntime/mobius#548": _S,
    "NVIDIA/Megatron-LM#1429": _R,  # softmax factor from mscale: no effect on DeepSeek-V3
    "huggingface/transformers#25306": _S,
    "vllm-project/vllm#3488": _S,
    "vllm-project/vllm#5093": _S,
    "huggingface/transformers#25104": _R,  # cached keys across a growing base: related
    "huggingface/transformers#48161": _S,
    "ndif-team/nnsight#673": _S,
    "unslothai/unsloth#3699": _R,  # a shipped bug; that its ids jump is the card's reading
    "Blaizzy/mlx-vlm#1709": _S,
    "lablup/mlxcel#1340": _S,
    "ggml-org/llama.cpp#14367": _S,
    "vllm-project/vllm#29111": _S,
}
THREADS_ON_CARD = 2

SIDE_THREADS: dict[str, tuple[str, ...]] = {
    "gemma_dropped": ("Blaizzy/mlx-vlm#1709", "lablup/mlxcel#1340"),
    "gemma_local": ("ggml-org/llama.cpp#14367", "vllm-project/vllm#29111"),
}


def threads_of(fid: str) -> dict[str, Any]:
    """The panel's threads by class; the card shows the first shipped ones."""
    by_kind = {k.value: [t for t in THREADS[fid] if THREAD_KIND[t] is k] for k in ThreadKind}
    return {
        "threads": by_kind[ThreadKind.SHIPPED.value],
        "threads_by_kind": by_kind,
        "threads_on_card": THREADS_ON_CARD,
    }


def thread_numbers() -> dict[str, Scalar]:
    """``threads_<panel>``: the bugs that shipped; ``threads_<panel>_question`` and
    ``threads_<panel>_related`` only where the panel cites such threads (a caption that names an
    empty class fails to fill)."""
    out: dict[str, Scalar] = {}
    for fid, cited in THREADS.items():
        name = f"threads_{fid[3:].replace('-', '_')}"
        for kind in ThreadKind:
            these = [t for t in cited if THREAD_KIND[t] is kind]
            if these:
                key = name if kind is ThreadKind.SHIPPED else f"{name}_{kind.value}"
                out[key] = ", ".join(these)
    return out
