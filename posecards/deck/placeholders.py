"""`posecards placeholders N`: every placeholder of card N's text (its card file and its slides in
deck.toml) with its current value and what each of its filters prints, and every variant choice.

For whoever edits the card text: which names exist, what they hold, which phrasing applies.
Computes the card once (card 1's UMAP layout comes from the disk cache after the first build)
and draws nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from posecards.config import PEParams
from posecards.content import DECK_FIELD, compute_card
from posecards.deck.notes import load_deck_text
from posecards.render.fields import (
    CardTextError,
    Text,
    TextSource,
    Variants,
    all_texts,
    chosen_variants,
)
from posecards.render.fill import fill, placeholders
from posecards.render.text import load_card_text


def _slide_fields(card: int, figure_ids: tuple[str, ...]) -> Iterator[tuple[str, Text]]:
    """The deck.toml fields filled with card ``card``'s numbers: its overview slide, its panels'
    slides and its line on the closing slide."""
    deck = load_deck_text()
    slides = [deck.cards[card]] if card in deck.cards else []
    slides += [deck.panels[f] for f in figure_ids if f in deck.panels]
    for s in slides:
        yield f"{s.key}.title", s.title
        for part, t in s.parts:
            yield f"{s.key}.{part}", t
    if card in deck.closing_items:
        yield f"closing.items.{card}", deck.closing_items[card]


def _plain(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, float):
        return repr(value) if isinstance(value, str) else str(value)
    return f"{value:.10g}"


def _printed(name: str, chain: str, values: Mapping[str, Any], src: TextSource) -> str:
    """What ``{{ name | chain }}`` prints (both languages where a name filter differs)."""
    expr = "{{ " + name + (f" | {chain}" if chain else "") + " }}"
    out = [fill(expr, values, src.file, src.names_in(lang)) for lang in ("en", "zh")]
    return out[0] if out[0] == out[1] else f"{out[0]} / {out[1]}"


def placeholder_report(card: int, params: PEParams) -> str:
    """The report `posecards placeholders N` prints (see the module docstring)."""
    text = load_card_text(card)
    numbers = compute_card(card, params).numbers
    deck_src = load_deck_text().title.source
    files: list[tuple[TextSource, list[tuple[str, Text]], dict[str, str]]] = [
        (text.source, list(text.fields()), chosen_variants(numbers)),
        (
            deck_src,
            list(_slide_fields(card, text.figure_ids)),
            chosen_variants(numbers, DECK_FIELD),
        ),
    ]
    # name -> filter chain -> (source to print with, fields using it)
    uses: dict[str, dict[str, tuple[TextSource, list[str]]]] = {}
    for src, fields, _ in files:
        for key, b in all_texts(fields):
            for name, chain in placeholders(b.en) + placeholders(b.zh):
                entry = uses.setdefault(name, {}).setdefault(chain, (src, []))
                where = f"{src.file}:{key}"
                if where not in entry[1]:
                    entry[1].append(where)
    lines = [
        f"card {card}: {text.path.name} and its slides in {deck_src.file}, "
        f"d_model = {params.d_model}, base = {params.base:g}, positions = {params.positions}",
        "",
        f"placeholders ({len(uses)}): value; what each filter prints; where it is used",
    ]
    width = max((len(n) for n in uses), default=0)
    for name in sorted(uses):
        if name not in numbers:
            raise CardTextError(
                f"{'; '.join(next(iter(uses[name].values()))[1])}: placeholder '{name}' has no "
                f"value (card {card} computes no '{name}')"
            )
        lines.append(f"  {name:<{width}}  {_plain(numbers[name])}")
        for chain, (printer, users) in uses[name].items():
            shown = _printed(name, chain, numbers, printer)
            more = f" (+{len(users) - 2} more)" if len(users) > 2 else ""
            lines.append(f"  {'':<{width}}    {chain or '(as is)'} -> {shown}")
            lines.append(f"  {'':<{width}}      in {', '.join(users[:2])}{more}")
    lines += ["", "variants: the phrasing the content chose, of those the text offers"]
    n_variants = len(lines)
    for src, fields, chosen in files:
        for key, t in fields:
            if isinstance(t, Variants):
                pick = chosen.get(key, "(none chosen)")
                lines.append(f"  {src.at(key)}  {key}: {pick}  (offers {', '.join(t.names)})")
    if len(lines) == n_variants:
        lines.append("  none: every field has one phrasing")
    unused = sorted(k for k in numbers if k not in uses and not k.startswith("@"))
    if unused:
        lines += ["", f"computed but not used by the text ({len(unused)}): {', '.join(unused)}"]
    return "\n".join(lines) + "\n"
