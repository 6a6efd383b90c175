"""Card 8 (position inside attention): ids, text and every panel's numbers, each checked against
transformers 5.23.0 (XLNet's rel_attn_core and rel_shift_bnij, DebertaV2's
DisentangledSelfAttention) or an independent formula written out here."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posecards.config import PEParams
from posecards.content import CardContent
from posecards.content.card8 import (
    DEB_BUCKETS,
    DEB_HEAD,
    DEB_HIDDEN,
    DEB_MAX_POSITION,
    EXTRA_IDS,
    PANEL_IDS,
    SCHEME_KINDS,
    SHAW_CLIP,
    SHIFT_MEMORY,
    SHIFT_QUERIES,
    XL_MEMORY,
    compute,
    deberta_example,
    linear_example,
    terms_example,
    xl_example,
)
from posecards.figures.card8 import DRAW
from posecards.render.text import fill_card, load_card_text


@pytest.fixture(scope="module")
def card() -> CardContent:
    return compute(PEParams())


def test_ids_match_everywhere(card: CardContent) -> None:
    text = load_card_text(8)
    assert list(DRAW) == list(PANEL_IDS + EXTRA_IDS)
    assert list(card.figures) == list(PANEL_IDS + EXTRA_IDS)
    assert [p.id for p in text.panels] == list(PANEL_IDS)
    assert [p.id for p in text.figures] == list(EXTRA_IDS)
    assert len(PANEL_IDS) <= 6


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_text_fills(card: CardContent, lang: str) -> None:
    filled = fill_card(load_card_text(8), lang, card.numbers)
    assert "{{" not in str(filled)


def test_four_terms(card: CardContent) -> None:
    """The rms of each term, from the expansion written out with einsum on the same draws."""
    ex = terms_example(PEParams())
    a = ex["wq"] @ ex["wk"].T  # (d, d) A = W_q W_kᵀ
    x, p = ex["x"], ex["p"]
    full = np.einsum("id,de,je->ij", x + p, a, x + p)
    parts = [np.einsum("id,de,je->ij", u, a, w) for u, w in ((x, x), (x, p), (p, x), (p, p))]
    np.testing.assert_allclose(sum(parts), full, rtol=1e-11, atol=1e-11)
    rms = [np.sqrt(np.mean(m**2)) for m in parts]
    np.testing.assert_allclose(card.figures["c8-terms"].rms, rms, rtol=1e-12)
    n = card.numbers
    assert [n["terms_cc"], n["terms_cp"], n["terms_pc"], n["terms_pp"]] == pytest.approx(rms)


def test_scheme_table_says_what_the_math_does() -> None:
    """Every scheme keeps content × content but RoPE, which rotates it; none keeps an absolute
    position but the sinusoids; the kinds are label keys of the card."""
    labels = load_card_text(8).labels
    for name, kinds in SCHEME_KINDS.items():
        assert all(k in labels for k in kinds)
        assert kinds[0] == ("kind_rot" if name == "rope" else "kind_abs")
        if name != "sinusoid":
            assert "kind_abs" not in kinds[1:]
    assert SCHEME_KINDS["deberta"][3] == "kind_none"  # no p2p in transformers' pos_att_type use
    assert SCHEME_KINDS["xl"] == ("kind_abs", "kind_rel", "kind_bias", "kind_scalar")


def test_shaw_panel(card: CardContent) -> None:
    data = card.figures["c8-shaw"]
    n = data.clipped.shape[0]
    for i in range(n):
        for j in range(n):
            assert data.clipped[i, j] == max(-SHAW_CLIP, min(SHAW_CLIP, j - i))
    assert data.rows == 2 * SHAW_CLIP + 1 == len(np.unique(data.clipped))
    num = card.numbers
    dist = np.abs(np.arange(n)[None, :] - np.arange(n)[:, None])
    assert num["shaw_edge_pairs"] == int(np.sum(dist >= SHAW_CLIP))
    assert num["shaw_beyond_pairs"] == int(np.sum(dist > SHAW_CLIP))
    assert num["shaw_numbers"] == 2 * data.rows * num["shaw_head"]


def test_xl_panel_matches_xlnet(card: CardContent) -> None:
    """softmax((a + b + c + d)/√d) of the panel equals XLNet's rel_attn_core with r_w_bias = u
    and r_r_bias = v, in float64; (c) is constant down columns, (d) along diagonals."""
    from transformers import XLNetConfig
    from transformers.models.xlnet.modeling_xlnet import XLNetRelativeAttention

    ex = xl_example()
    data = card.figures["c8-xl"]
    dh = ex["q"].shape[1]
    layer = (
        XLNetRelativeAttention(
            XLNetConfig(vocab_size=10, d_model=dh, n_layer=1, n_head=1, d_inner=8)
        )
        .double()
        .eval()
    )
    with torch.no_grad():
        layer.r_w_bias.copy_(torch.from_numpy(ex["u"][None]))
        layer.r_r_bias.copy_(torch.from_numpy(ex["v"][None]))
        q, k, r = (torch.from_numpy(ex[n][:, None, None, :]) for n in ("q", "k", "r"))
        _, prob = layer.rel_attn_core(q, k, k, r, output_attentions=True)
    total = data.a + data.b + data.c + data.d
    ours = np.exp(total / np.sqrt(dh) - (total / np.sqrt(dh)).max(axis=1, keepdims=True))
    ours /= ours.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ours, prob[:, :, 0, 0].numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(data.a, ex["q"] @ ex["k"].T, rtol=1e-13)
    assert np.ptp(data.c, axis=0).max() == 0.0 and card.numbers["xl_c_spread"] == 0.0
    q_len, k_len = data.d.shape
    for off in range(-q_len + 1, k_len):
        assert np.ptp(np.diagonal(data.d, off)) == 0.0
    assert data.memory == XL_MEMORY


def test_shift_panel_matches_xlnet(card: CardContent) -> None:
    from transformers.models.xlnet.modeling_xlnet import XLNetRelativeAttention

    data = card.figures["c8-shift"]
    q_len, m = SHIFT_QUERIES, SHIFT_MEMORY
    ref = XLNetRelativeAttention.rel_shift_bnij(
        torch.from_numpy(data.columns[None, None]), klen=m + q_len
    )[0, 0].numpy()
    np.testing.assert_array_equal(data.shifted, ref)
    i, j = np.meshgrid(np.arange(q_len), np.arange(m + q_len), indexing="ij")
    np.testing.assert_array_equal(data.shifted, m + i - j)  # the distance each pair needs
    np.testing.assert_array_equal(np.take_along_axis(data.columns, data.picked, 1), data.shifted)
    assert card.numbers["shift_products"] == q_len * (m + 2 * q_len)


def _deberta_probs() -> np.ndarray:
    from transformers import DebertaV2Config
    from transformers.models.deberta_v2.modeling_deberta_v2 import DisentangledSelfAttention

    ex = deberta_example()
    cfg = DebertaV2Config(
        hidden_size=DEB_HIDDEN,
        num_attention_heads=1,
        attention_head_size=DEB_HEAD,
        relative_attention=True,
        pos_att_type=["c2p", "p2c"],
        position_buckets=DEB_BUCKETS,
        max_relative_positions=DEB_MAX_POSITION,
        share_att_key=False,
    )
    layer = DisentangledSelfAttention(cfg).double().eval()
    with torch.no_grad():
        for name, w in (
            ("query_proj", "wq"),
            ("key_proj", "wk"),
            ("pos_query_proj", "wqr"),
            ("pos_key_proj", "wkr"),
        ):
            lin = getattr(layer, name)
            lin.weight.copy_(torch.from_numpy(ex[w].T))
            lin.bias.zero_()
        hidden = torch.from_numpy(ex["hidden"][None])
        n = hidden.shape[1]
        _, probs = layer(
            hidden,
            torch.ones(1, 1, n, n),
            output_attentions=True,
            rel_embeddings=torch.from_numpy(ex["rel_embeddings"]),
        )
    return probs[0, 0].numpy()


def test_deberta_panel_matches_debertav2(card: CardContent) -> None:
    data = card.figures["c8-deberta"]
    total = data.c2c + data.c2p + data.p2c  # each already over √(3d)
    ours = np.exp(total - total.max(axis=1, keepdims=True))
    ours /= ours.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ours, _deberta_probs(), rtol=1e-12, atol=1e-15)
    num = card.numbers
    assert num["deb_scale"] == 6.0 == np.sqrt(3 * DEB_HEAD)
    assert num["deb_scale_ratio"] == pytest.approx(np.sqrt(3), rel=1e-15)
    # the pair at distance -(n - 1) reads a log bucket, not its own distance
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    ref = make_log_bucket_position(
        torch.tensor([num["deb_distance_first"]]), DEB_BUCKETS, DEB_MAX_POSITION
    )
    assert num["deb_delta_first"] == int(ref[0])


def test_linear_panel(card: CardContent) -> None:
    """Each weight by the formula (loop over pairs, RoPE written as 2 × 2 rotations here), the
    elu + 1 map as torch's elu; the count of negatives; the rows' sums."""
    ex = linear_example()
    q, k, inv = ex["q"], ex["k"], ex["inv_freq"]
    fq = torch.nn.functional.elu(torch.from_numpy(q)).numpy() + 1
    fk = torch.nn.functional.elu(torch.from_numpy(k)).numpy() + 1
    n, d = q.shape
    half = d // 2

    def rot(x: np.ndarray, pos: int) -> np.ndarray:  # "half" layout: pairs (k, k + d/2)
        out = x.copy()
        for p in range(half):
            c, s = np.cos(pos * inv[p]), np.sin(pos * inv[p])
            out[p], out[p + half] = c * x[p] - s * x[p + half], s * x[p] + c * x[p + half]
        return out

    want = np.array([[rot(fq[i], i) @ rot(fk[j], j) for j in range(n)] for i in range(n)])
    want /= (fq @ fk.T).sum(axis=1, keepdims=True)
    data = card.figures["c8-linear"]
    np.testing.assert_allclose(data.numerator, want, rtol=1e-12, atol=1e-14)
    assert data.negative == int(np.sum(want < 0)) == card.numbers["lin_negative"]
    num = card.numbers
    assert num["lin_order_plain"] < 1e-14 < 1e-3 < num["lin_order_rope"]
    assert num["lin_row_sum_min"] == pytest.approx(want.sum(axis=1).min(), rel=1e-12)
    assert num["lin_den_min"] > 0


def test_kernel_claim_numbers(card: CardContent) -> None:
    """Issue 37, item 6, recomputed here: exp of the four terms is the product of their exps;
    the share of query coordinates where elu + 1 adds position linearly; both ratios > 0."""
    ex = terms_example(PEParams())
    x, p, wq, wk = ex["x"], ex["p"], ex["wq"], ex["wk"]
    s = ((x + p) @ wq) @ ((x + p) @ wk).T / np.sqrt(wq.shape[1])
    num = card.numbers
    assert num["kernel_factor_gap"] < 1e-14
    u, w = x @ wq, p @ wq
    assert num["kernel_linear_share"] == float(np.mean((u > 0) & (u + w > 0)))
    assert 0 < num["kernel_linear_share"] < 1
    assert num["kernel_pos_linear"] > 0 and num["kernel_pos_softmax"] > 0
    assert num["kernel_flatter"] > 1  # linear attention's outputs move less for both
    assert np.isfinite(s).all()


def test_kernel_claim_over_seeds_with_torch(card: CardContent) -> None:
    """The 20-draw count, recomputed with torch's softmax and elu (not the math layer)."""
    from posecards.content.card8 import _kernel_draw

    p = torch.from_numpy(terms_example(PEParams())["p"])
    n, d = p.shape

    def soft(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.softmax(q @ k.T / q.shape[1] ** 0.5, dim=-1) @ v

    def lin(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        fq, fk = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
        return (fq @ fk.T) @ v / (fq @ fk.T).sum(dim=1, keepdim=True)

    def share(attend, x, wq, wk, v) -> float:  # type: ignore[no-untyped-def]
        full = attend((x + p) @ wq, (x + p) @ wk, v)
        no_pos, no_content = attend(x @ wq, x @ wk, v), attend(p @ wq, p @ wk, v)
        return float(
            (full - no_pos).pow(2).mean().sqrt() / (full - no_content).pow(2).mean().sqrt()
        )

    below, ratios = 0, []
    for seed in range(card.numbers["kernel_seeds"]):
        ex = _kernel_draw(n, d, 64, seed)
        draw = [torch.from_numpy(ex[k]) for k in ("x", "wq", "wk", "v")]
        s, li = share(soft, *draw), share(lin, *draw)
        below += li < s
        ratios.append(li / s)
    assert card.numbers["kernel_seeds_below"] == below
    assert card.numbers["kernel_ratio_median"] == pytest.approx(np.median(ratios), rel=1e-10)


def test_transformer_xl_shift_page(card: CardContent) -> None:
    """Transformer-XL's zero-pad shift (kimiyoung/transformer-xl, RelMultiHeadAttn._rel_shift):
    where the causal query sees the key the cell is M + i − j (XLNet's too); the others are the
    padded zero or a number of the next row, hidden by the mask."""
    data = card.figures["c8-shift-xl"]
    q_len, m = SHIFT_QUERIES, SHIFT_MEMORY
    i, j = np.meshgrid(np.arange(q_len), np.arange(m + q_len), indexing="ij")
    seen = j <= m + i
    np.testing.assert_array_equal(data.visible, seen.astype(np.int64))
    np.testing.assert_array_equal(data.shifted[seen], (m + i - j)[seen])
    flat = np.concatenate([np.zeros((q_len, 1)), data.columns], axis=1).ravel()
    for r, c in zip(*np.nonzero(~seen), strict=True):  # leftovers: flat index q + r·K + c
        assert data.shifted[r, c] == flat[q_len + r * (m + q_len) + c]
    assert card.numbers["shift_xl_hidden"] == int(np.sum(~seen))
