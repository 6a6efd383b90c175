"""Card 8's math layer against transformers 5.23.0 (XLNet, DeBERTa-v2) and independent formulas:
the four score terms, Shaw's clipped table, the relative shift, Transformer-XL's u/v terms,
DeBERTa's c2c/c2p/p2c and linear attention with RoPE in the numerator."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posecards.encodings.disentangled import (
    deberta_relative_positions,
    disentangled_scale,
    disentangled_slots,
    disentangled_terms,
    p2c_by_gather,
)
from posecards.encodings.linear_attention import (
    elu_feature_map,
    linear_attention,
    linear_attention_linear_time,
)
from posecards.encodings.rel_shift import (
    rel_shift,
    rel_shift_columns,
    rel_shift_zero_pad,
    rel_shift_zero_pad_columns,
    xl_relative_distances,
)
from posecards.encodings.rope import apply_rope
from posecards.encodings.score_terms import score_terms
from posecards.encodings.shaw import shaw_attention, shaw_index, shaw_table_rows
from posecards.encodings.sinusoidal import pair_frequencies, sinusoidal_pe
from posecards.encodings.softmax import softmax
from posecards.encodings.xl_attention import xl_attention, xl_terms

PROPS = settings(max_examples=40, deadline=None)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---- the four terms ---------------------------------------------------------------------------


@PROPS
@given(n=st.integers(1, 6), d=st.integers(1, 6), h=st.integers(1, 4), seed=st.integers(0, 999))
def test_four_terms_sum_to_the_score(n: int, d: int, h: int, seed: int) -> None:
    g = _rng(seed)
    x, p = g.normal(size=(n, d)), g.normal(size=(n, d))
    wq, wk = g.normal(size=(d, h)), g.normal(size=(d, h))
    t = score_terms(x, p, wq, wk)
    full = (x + p) @ wq @ ((x + p) @ wk).T
    np.testing.assert_allclose(t.total, full, rtol=1e-12, atol=1e-12)
    # without position only content → content is left
    zero = score_terms(x, np.zeros_like(p), wq, wk)
    assert not zero.cp.any() and not zero.pc.any() and not zero.pp.any()


def test_four_terms_refuse_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="same shape"):
        score_terms(np.ones((2, 3)), np.ones((3, 3)), np.ones((3, 2)), np.ones((3, 2)))


# ---- Shaw -------------------------------------------------------------------------------------


@PROPS
@given(nq=st.integers(1, 12), nk=st.integers(1, 12), k=st.integers(1, 6))
def test_shaw_index_clips(nq: int, nk: int, k: int) -> None:
    idx = shaw_index(nq, nk, k)
    for i in range(nq):
        for j in range(nk):
            assert idx[i, j] == max(-k, min(k, j - i)) + k
    assert idx.min() >= 0 and idx.max() <= 2 * k
    assert shaw_table_rows(k) == 2 * k + 1


def test_shaw_distances_beyond_k_share_one_vector() -> None:
    idx = shaw_index(1, 10, 3)[0]  # query 0, keys 0..9
    assert list(idx) == [3, 4, 5, 6, 6, 6, 6, 6, 6, 6]


def test_shaw_attention_is_the_loop_of_the_paper() -> None:
    g = _rng(1)
    n, d, k = 6, 4, 2
    q, kk, v = (g.normal(size=(n, d)) for _ in range(3))
    wk, wv = g.normal(size=(2 * k + 1, d)), g.normal(size=(2 * k + 1, d))
    got = shaw_attention(q, kk, v, wk, wv, k)
    for i in range(n):
        e = np.array(
            [q[i] @ (kk[j] + wk[max(-k, min(k, j - i)) + k]) / np.sqrt(d) for j in range(n)]
        )
        a = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
        z = sum(a[j] * (v[j] + wv[max(-k, min(k, j - i)) + k]) for j in range(n))
        np.testing.assert_allclose(got.scores[i], e, rtol=1e-13)
        np.testing.assert_allclose(got.outputs[i], z, rtol=1e-12)


def test_shaw_is_shift_invariant_in_position() -> None:
    """The same tokens one seat further: Shaw's scores do not change (only j - i is read)."""
    g = _rng(2)
    q, kk, v = (g.normal(size=(5, 4)) for _ in range(3))
    wk, wv = g.normal(size=(5, 4)), g.normal(size=(5, 4))
    a = shaw_attention(q, kk, v, wk, wv, 2)
    pad = g.normal(size=(1, 4))
    b = shaw_attention(np.vstack([pad, q]), np.vstack([pad, kk]), np.vstack([pad, v]), wk, wv, 2)
    # rows 1.. of b over keys 1.. equal a's scores
    np.testing.assert_allclose(b.scores[1:, 1:], a.scores, rtol=1e-14)


# ---- relative shift ---------------------------------------------------------------------------


@PROPS
@given(q=st.integers(1, 7), m=st.integers(0, 7), seed=st.integers(0, 999))
def test_xlnet_shift_is_the_gather(q: int, m: int, seed: int) -> None:
    k = m + q
    bd = _rng(seed).normal(size=(2, q, k + q))
    cols = rel_shift_columns(q, k)
    np.testing.assert_array_equal(rel_shift(bd, k), np.take_along_axis(bd, cols[None], axis=-1))
    # each column is the distance M + i - j
    dist = xl_relative_distances(q, k)
    i, j = np.meshgrid(np.arange(q), np.arange(k), indexing="ij")
    np.testing.assert_array_equal(dist[cols], m + i - j)


@PROPS
@given(q=st.integers(1, 7), m=st.integers(0, 7), seed=st.integers(0, 999))
def test_transformer_xl_shift_is_the_gather_where_the_mask_is_open(
    q: int, m: int, seed: int
) -> None:
    r = m + q
    bd = _rng(seed).normal(size=(q, r))
    out = rel_shift_zero_pad(bd)
    cols = rel_shift_zero_pad_columns(q, r)
    open_ = np.arange(r)[None, :] <= m + np.arange(q)[:, None]  # causal: j <= M + i
    np.testing.assert_array_equal((cols >= 0), open_)
    np.testing.assert_array_equal(
        out[open_], np.take_along_axis(bd, np.maximum(cols, 0), -1)[open_]
    )
    # Transformer-XL's distances R-1..0: the column read at (i, j) is distance M + i - j
    dist = np.arange(r - 1, -1, -1)
    i, j = np.nonzero(open_)
    np.testing.assert_array_equal(dist[cols[i, j]], m + i - j)


@PROPS
@given(q=st.integers(1, 6), m=st.integers(0, 6), seed=st.integers(0, 999))
def test_shift_matches_xlnet(q: int, m: int, seed: int) -> None:
    from transformers.models.xlnet.modeling_xlnet import XLNetRelativeAttention

    k = m + q
    bd = _rng(seed).normal(size=(1, 2, q, k + q))
    ref = XLNetRelativeAttention.rel_shift_bnij(torch.from_numpy(bd), klen=k).numpy()
    np.testing.assert_array_equal(rel_shift(bd, k), ref)


def test_xlnet_distances_and_encodings() -> None:
    from transformers import XLNetConfig, XLNetModel

    assert list(xl_relative_distances(3, 5)) == [5, 4, 3, 2, 1, 0, -1, -2]
    assert list(xl_relative_distances(3, 5, "uni")) == [5, 4, 3, 2, 1, 0]
    d = 16
    dist = xl_relative_distances(3, 5)
    inv = torch.from_numpy(pair_frequencies(d))
    ref = XLNetModel.positional_embedding(torch.from_numpy(dist), inv)[:, 0].numpy()
    np.testing.assert_allclose(sinusoidal_pe(dist, d, layout="half"), ref, rtol=0, atol=1e-15)
    # the model's own (float32) encodings: the same distances
    model = XLNetModel(XLNetConfig(vocab_size=10, d_model=d, n_layer=1, n_head=2, d_inner=8))
    got = model.relative_positional_encoding(3, 5, bsz=1)[:, 0].double().numpy()
    np.testing.assert_allclose(got, sinusoidal_pe(dist, d, layout="half"), atol=1e-6)


def _xlnet_layer(seed: int, d_model: int = 8, n_head: int = 2):  # type: ignore[no-untyped-def]
    from transformers import XLNetConfig
    from transformers.models.xlnet.modeling_xlnet import XLNetRelativeAttention

    cfg = XLNetConfig(vocab_size=10, d_model=d_model, n_layer=1, n_head=n_head, d_inner=8)
    layer = XLNetRelativeAttention(cfg).double().eval()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64))
    return layer


@pytest.mark.parametrize(("q_len", "m_len", "seed"), [(4, 0, 0), (3, 2, 1), (5, 3, 2)])
def test_xl_attention_matches_xlnet_rel_attn_core(q_len: int, m_len: int, seed: int) -> None:
    layer = _xlnet_layer(seed)
    g = _rng(seed)
    k_len = m_len + q_len
    n_head, d_head = 2, 4
    q = g.normal(size=(q_len, 1, n_head, d_head))
    k = g.normal(size=(k_len, 1, n_head, d_head))
    v = g.normal(size=(k_len, 1, n_head, d_head))
    r = g.normal(size=(k_len + q_len, 1, n_head, d_head))
    t = [torch.from_numpy(a) for a in (q, k, v, r)]
    with torch.no_grad():
        vec, prob = layer.rel_attn_core(*t, output_attentions=True)
    u_all, v_all = layer.r_w_bias.detach().numpy(), layer.r_r_bias.detach().numpy()
    for h in range(n_head):
        ours = xl_attention(q[:, 0, h], k[:, 0, h], v[:, 0, h], r[:, 0, h], u_all[h], v_all[h])
        np.testing.assert_allclose(ours.weights, prob[:, :, 0, h].numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ours.outputs, vec[:, 0, h].numpy(), rtol=1e-12, atol=1e-14)
        # the four terms, each by its own formula: (b) and (d) read distance M + i - j
        terms = xl_terms(q[:, 0, h], k[:, 0, h], r[:, 0, h], u_all[h], v_all[h])
        dist = xl_relative_distances(q_len, k_len)
        for i in range(q_len):
            for j in range(k_len):
                c = int(np.nonzero(dist == m_len + i - j)[0][0])
                assert terms.b[i, j] == pytest.approx(q[i, 0, h] @ r[c, 0, h], rel=1e-13)
                assert terms.d[i, j] == pytest.approx(v_all[h] @ r[c, 0, h], rel=1e-13)
                assert terms.c[i, j] == pytest.approx(u_all[h] @ k[j, 0, h], rel=1e-13)


def test_xl_terms_refuse_a_wrong_number_of_encodings() -> None:
    with pytest.raises(ValueError, match="K \\+ Q"):
        xl_terms(np.ones((2, 4)), np.ones((3, 4)), np.ones((4, 4)), np.ones(4), np.ones(4))


# ---- DeBERTa ----------------------------------------------------------------------------------


def _deberta_layer(seed: int, share: bool, buckets: int, max_rel: int, types: list[str]):  # type: ignore[no-untyped-def]
    from transformers import DebertaV2Config
    from transformers.models.deberta_v2.modeling_deberta_v2 import DisentangledSelfAttention

    cfg = DebertaV2Config(
        hidden_size=24,
        num_attention_heads=2,  # d_head = 12: √(3·12) = 6 exactly, in float32 too
        relative_attention=True,
        pos_att_type=types,
        position_buckets=buckets,
        max_relative_positions=max_rel,
        share_att_key=share,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    layer = DisentangledSelfAttention(cfg).double().eval()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * 0.3)
    return layer


def _heads(x: torch.Tensor, n_head: int = 2) -> np.ndarray:
    """(1, L, n_head·d) → (n_head, L, d) float64."""
    return x.view(x.shape[1], n_head, -1).permute(1, 0, 2).detach().numpy()


@pytest.mark.parametrize("share", [False, True])
@pytest.mark.parametrize(("n", "buckets", "max_rel"), [(12, 8, 32), (7, -1, 5)])
def test_disentangled_matches_deberta_v2(share: bool, n: int, buckets: int, max_rel: int) -> None:
    from transformers.models.deberta_v2.modeling_deberta_v2 import build_relative_position

    layer = _deberta_layer(3, share, buckets, max_rel, ["c2p", "p2c"])
    span = layer.pos_ebd_size
    g = torch.Generator().manual_seed(4)
    hidden = torch.randn(1, n, 24, generator=g, dtype=torch.float64)
    rel_emb = torch.randn(2 * span, 24, generator=g, dtype=torch.float64)
    mask = torch.ones(1, 1, n, n)
    with torch.no_grad():
        _, probs = layer(hidden, mask, output_attentions=True, rel_embeddings=rel_emb)
        ref_pos = build_relative_position(hidden, hidden, buckets, max_rel)[0].numpy()
    rel = deberta_relative_positions(n, n, buckets, max_rel)
    np.testing.assert_array_equal(rel, ref_pos)
    qc, kc = _heads(layer.query_proj(hidden)), _heads(layer.key_proj(hidden))
    q_proj = layer.query_proj if share else layer.pos_query_proj
    k_proj = layer.key_proj if share else layer.pos_key_proj
    qr, kr = _heads(q_proj(rel_emb[None])), _heads(k_proj(rel_emb[None]))
    assert disentangled_scale(12) == 6.0
    for h in range(2):
        terms = disentangled_terms(qc[h], kc[h], qr[h], kr[h], rel, span)
        np.testing.assert_allclose(
            softmax(terms.total(12)), probs[0, h].numpy(), rtol=1e-12, atol=1e-15
        )
        np.testing.assert_allclose(
            p2c_by_gather(kc[h], qr[h], rel, span), terms.p2c, rtol=1e-13, atol=1e-14
        )


@pytest.mark.parametrize("kind", ["c2p", "p2c"])
def test_each_term_matches_deberta_v2(kind: str) -> None:
    """With one position term transformers' bias is that term alone over √(3d) (scale_factor 3)."""
    n, buckets, max_rel = 12, 8, 32
    layer = _deberta_layer(5, False, buckets, max_rel, [kind])
    span = layer.pos_ebd_size
    g = torch.Generator().manual_seed(6)
    hidden = torch.randn(1, n, 24, generator=g, dtype=torch.float64)
    rel_emb = torch.randn(2 * span, 24, generator=g, dtype=torch.float64)
    rel = deberta_relative_positions(n, n, buckets, max_rel)
    ql = layer.transpose_for_scores(layer.query_proj(hidden), 2)
    kl = layer.transpose_for_scores(layer.key_proj(hidden), 2)
    with torch.no_grad():
        bias = layer.disentangled_attention_bias(ql, kl, None, rel_emb, 3).numpy()
    qc, kc = ql.detach().numpy(), kl.detach().numpy()
    proj = layer.pos_key_proj if kind == "c2p" else layer.pos_query_proj
    table = _heads(proj(rel_emb[None]))
    for h in range(2):
        qr = table[h] if kind == "p2c" else np.zeros_like(table[h])
        kr = table[h] if kind == "c2p" else np.zeros_like(table[h])
        terms = disentangled_terms(qc[h], kc[h], qr, kr, rel, span)
        ours = terms.c2p if kind == "c2p" else terms.p2c
        np.testing.assert_allclose(ours / 6.0, bias[h], rtol=1e-12, atol=1e-15)


@PROPS
@given(n=st.integers(1, 9), span=st.integers(1, 6), seed=st.integers(0, 999))
def test_p2c_reads_the_same_slot_as_c2p(n: int, span: int, seed: int) -> None:
    """δ is odd, so clamp(-δ(j, i) + s) = clamp(δ(i, j) + s): p2c's transposed index lands on
    c2p's slot; the gather-and-transpose equals K^c_j · Q^r_c(i,j)."""
    g = _rng(seed)
    rel = deberta_relative_positions(n, n)
    kc, qr = g.normal(size=(n, 3)), g.normal(size=(2 * span, 3))
    slots = disentangled_slots(rel, span)
    explicit = np.einsum("jd,ijd->ij", kc, qr[slots])
    np.testing.assert_allclose(p2c_by_gather(kc, qr, rel, span), explicit, rtol=1e-13, atol=1e-14)


# ---- linear attention ------------------------------------------------------------------------


def test_elu_feature_map_is_torch_elu_plus_one() -> None:
    x = np.linspace(-30, 30, 1201)
    # torch's elu is expm1(x) for x <= 0: + 1 rounds to the ulp of 1 (2.2e-16)
    ref = torch.nn.functional.elu(torch.from_numpy(x)).numpy() + 1
    np.testing.assert_allclose(elu_feature_map(x), ref, rtol=1e-15, atol=2.3e-16)
    assert (elu_feature_map(x) > 0).all()


@PROPS
@given(n=st.integers(1, 8), seed=st.integers(0, 999), rope=st.booleans())
def test_linear_time_form_equals_the_quadratic_form(n: int, seed: int, rope: bool) -> None:
    g = _rng(seed)
    q, k, v = g.normal(size=(n, 6)), g.normal(size=(n, 6)), g.normal(size=(n, 3))
    inv = pair_frequencies(6) if rope else None
    np.testing.assert_allclose(
        linear_attention_linear_time(q, k, v, inv),
        linear_attention(q, k, v, inv).outputs,
        rtol=1e-10,
        atol=1e-12,
    )


@PROPS
@given(n=st.integers(2, 8), seed=st.integers(0, 999), data=st.data())
def test_linear_attention_without_position_is_blind_to_order(
    n: int, seed: int, data: st.DataObject
) -> None:
    order = np.array(data.draw(st.permutations(range(n))))
    g = _rng(seed)
    q, k, v = g.normal(size=(n, 4)), g.normal(size=(n, 4)), g.normal(size=(n, 2))
    a = linear_attention(q, k, v).outputs
    b = linear_attention(q[order], k[order], v[order]).outputs
    np.testing.assert_allclose(b, a[order], rtol=1e-12, atol=1e-13)


def test_rope_in_the_numerator_is_relative_and_the_denominator_positive() -> None:
    g = _rng(7)
    n, d = 6, 8
    q, k, v = g.normal(size=(n, d)), g.normal(size=(n, d)), g.normal(size=(n, 2))
    inv = pair_frequencies(d)
    out = linear_attention(q, k, v, inv)
    fq, fk = elu_feature_map(q), elu_feature_map(k)
    for i in range(n):
        for j in range(n):
            # (R_i φq)ᵀ(R_j φk) = φqᵀ R_(j-i) φk
            moved = apply_rope(fk[j], [j - i], inv)
            assert out.numerator[i, j] == pytest.approx(fq[i] @ moved, rel=1e-12, abs=1e-13)
    assert (out.denominator > 0).all()
    np.testing.assert_allclose(out.denominator, (fq @ fk.T).sum(axis=1), rtol=1e-14)
    plain = linear_attention(q, k, v)
    np.testing.assert_allclose(plain.weights.sum(axis=1), 1.0, rtol=1e-14)
