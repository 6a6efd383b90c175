"""What each command does, once the command line has parsed its options: make a plan, run it.

This is the one layer posecards.cli calls (an import-linter contract holds it to that). The
commands that make a folder (`build`, `deck`, `inspect`) share ``run_plan``: the lock, SIGTERM as
Ctrl-C, the up-to-date test, the engine, the atomic writer. Problems with the input raise
posecards.errors.PosecardsError (one line, exit 2); anything else is a bug.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from posecards.cache import write_bytes_atomic
from posecards.config import (
    CARD_IDS,
    BuildConfig,
    DeckConfig,
    ExploreConfig,
    InspectConfig,
    Look,
    MeasureConfig,
    PEParams,
)
from posecards.engine.units import Plan, Say, quiet
from posecards.errors import Interrupted, PosecardsError

# ----------------------------------------------------------------------------- options


def build_options(cfg: BuildConfig) -> dict[str, Any]:
    """A build's options by their command-line names (what ``given`` and manifests hold)."""
    return {
        "cards": cfg.cards,
        "langs": cfg.langs,
        "formats": cfg.formats,
        "theme": cfg.look.theme,
        "size": cfg.look.size,
        "scale": cfg.look.scale,
        "svg_text": cfg.look.svg_text,
        "d_model": cfg.params.d_model,
        "base": cfg.params.base,
        "positions": cfg.params.positions,
    }


def deck_options(cfg: DeckConfig) -> dict[str, Any]:
    return {
        "cards": cfg.cards,
        "langs": cfg.langs,
        "formats": cfg.formats,
        "theme": cfg.theme,
        "d_model": cfg.params.d_model,
        "base": cfg.params.base,
        "positions": cfg.params.positions,
    }


def _resolved(
    defaults: Mapping[str, Any], out: Path, given: Mapping[str, Any], check: bool
) -> dict[str, Any]:
    """Defaults, then (``--check``) what DIR's manifest records, then the options given."""
    opts = dict(defaults)
    if check:
        from posecards.engine.manifest import read_manifest, recorded_options

        doc = read_manifest(out)
        recorded = recorded_options(doc, tuple(defaults)) if doc is not None else None
        opts.update(recorded or {})
    opts.update(given)
    return opts


def build_config(
    out: Path, given: Mapping[str, Any], *, check: bool, jobs: int, quiet: bool, cache: bool
) -> BuildConfig:
    o = _resolved(build_options(BuildConfig()), out, given, check)
    return BuildConfig(
        out=out,
        cards=o["cards"],
        langs=o["langs"],
        formats=o["formats"],
        look=Look(theme=o["theme"], size=o["size"], scale=o["scale"], svg_text=o["svg_text"]),
        params=PEParams(d_model=o["d_model"], base=o["base"], positions=o["positions"]),
        jobs=jobs,
        check=check,
        quiet=quiet,
        cache=cache,
    )


def deck_config(
    out: Path, given: Mapping[str, Any], *, check: bool, jobs: int, quiet: bool, cache: bool
) -> DeckConfig:
    o = _resolved(deck_options(DeckConfig()), out, given, check)
    return DeckConfig(
        out=out,
        cards=o["cards"],
        langs=o["langs"],
        formats=o["formats"],
        theme=o["theme"],
        params=PEParams(d_model=o["d_model"], base=o["base"], positions=o["positions"]),
        jobs=jobs,
        check=check,
        quiet=quiet,
        cache=cache,
    )


# ------------------------------------------------------------------------ running a plan


def writable(out: Path) -> str | None:
    """Why ``out`` cannot be written to, or None (checked before any work starts)."""
    probe = out.resolve()
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable"
    return None


def not_a_folder(out: Path | None) -> None:
    if out is not None and out.exists() and not out.is_dir():
        raise PosecardsError(f"--out {out} exists and is not a folder")


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """SIGTERM stops a command as Ctrl-C does (KeyboardInterrupt): outputs left as they were."""

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def run_plan(plan: Plan, say: Say, *, jobs: int, cache: bool, oom: str) -> None:
    """Make the plan's folder: nothing if it is up to date (unless ``cache`` is off, which
    renders everything), else the engine's outputs, written atomically, under the folder's
    lock. Ctrl-C, SIGTERM, a failure or a killed worker leave the folder as it was."""
    from posecards.engine.judge import up_to_date
    from posecards.engine.lock import build_lock
    from posecards.engine.site import write_outputs

    out = plan.out
    if why := writable(out):
        raise PosecardsError(f"cannot write to --out {out}: {why}")
    n = len(plan.files) + 1
    try:
        with stop_on_sigterm(), build_lock(out, wait=True):
            if cache and up_to_date(plan):
                say(f"{out} is up to date ({n} files)")
                return
            from posecards.engine.executor import run

            files = run(plan, say, use_cache=cache, jobs=jobs)
            say(f"writing {len(files)} files to {out}")
            written = write_outputs(out, files)
    except KeyboardInterrupt:
        raise Interrupted(f"{out} was left as it was") from None
    except MemoryError:
        raise PosecardsError(oom) from None
    if written:
        say(f"wrote {len(written)} of {len(files)} files to {out}")
    else:
        say(f"{out} is up to date ({len(files)} files)")


def _oom(params: PEParams) -> str:
    return (
        f"out of memory for d_model={params.d_model}, positions={params.positions}; "
        "lower --d-model or --positions"
    )


# ------------------------------------------------------------------------ build and deck


def build(cfg: BuildConfig, say: Say = quiet) -> None:
    """`posecards build`: every card, figure, page and the manifest into ``cfg.out``."""
    from posecards.render.build import plan_build

    plan = plan_build(cfg)
    say(f"building cards {','.join(map(str, cfg.cards))} ({','.join(cfg.langs)})")
    run_plan(plan, say, jobs=cfg.jobs, cache=cfg.cache, oom=_oom(cfg.params))


def deck(cfg: DeckConfig, say: Say = quiet) -> None:
    """`posecards deck`: the lecture deck of ``cfg.cards`` into ``cfg.out``."""
    from posecards.deck.build import plan_deck_build

    plan = plan_deck_build(cfg)
    say(f"building deck {','.join(map(str, cfg.cards))} ({','.join(cfg.langs)})")
    run_plan(plan, say, jobs=cfg.jobs, cache=cfg.cache, oom=_oom(cfg.params))


def check(
    cfg: BuildConfig | DeckConfig, given: Mapping[str, Any], render: bool = False, say: Say = quiet
) -> Any:
    """``--check``: the verdict on ``cfg.out`` by its recipe and file hashes (no drawing);
    ``render`` (cards): also compared with a fresh render, with a tolerance. Writes nothing."""
    from posecards.cache import memos_read_only
    from posecards.engine.judge import check as judge_check
    from posecards.engine.judge import compare_render
    from posecards.engine.lock import build_lock

    with memos_read_only():  # font hashes, the deck text: computed, not remembered
        if isinstance(cfg, DeckConfig):
            from posecards.deck.build import plan_deck_build

            plan = plan_deck_build(cfg)
        else:
            from posecards.render.build import plan_build

            plan = plan_build(cfg)
    with build_lock(cfg.out, wait=False), memos_read_only():
        verdict = judge_check(plan, given)
        if render and not verdict.reasons:
            from posecards.engine.executor import run

            try:
                with stop_on_sigterm():
                    fresh = run(plan, say, use_cache=cfg.cache, jobs=cfg.jobs)
            except KeyboardInterrupt:
                raise Interrupted(f"{cfg.out} was left as it was") from None
            for line in compare_render(cfg.out, fresh):
                verdict.add(line, [line.split(": ", 1)[1].split(" (")[0]])
    return verdict


# --------------------------------------------------------------------------- inspect


def no_table_values(name: str, found: Any) -> str:
    """The line for a card asked of a learned table whose values the folder does not hold."""
    if found.kind == "relative":
        b = found.measured.biases[0]
        return (
            f"{name}: {found.measured.model_class} adds a T5 relative position bias inside its "
            f"attention ({len(found.measured.biases)} table(s); {b.num_buckets} buckets, "
            f"max_distance {b.max_distance}, {b.heads} heads, as transformers "
            f"{found.measured.transformers_version} runs it); posecards inspect draws no card "
            "for a relative bias yet: write the reading with --format json"
        )
    t = found.measured.tables[0]
    return (
        f"{name}: {found.measured.model_class} adds the learned position table {found.tensor} "
        f"({t.rows} x {t.width}; position p reads row p + {t.offset}, as transformers "
        f"{found.measured.transformers_version} runs it); its values are in the checkpoint's "
        "weights, which this folder does not hold: add them to draw the card, or write the "
        "reading with --format json"
    )


def inspect(path: str, cfg: InspectConfig, say: Say = quiet) -> None:
    """`posecards inspect PATH`: read the model (only what the card needs), then make its card."""
    import warnings

    from posecards.content.inspect import compute_inspection
    from posecards.model.checkpoint import open_checkpoint
    from posecards.model.positions import InspectOptions, find_positions
    from posecards.render.inspect import default_out, plan_inspection

    try:
        # a checkpoint is untrusted input: warnings from torch or numpy about odd tensors would
        # add lines to stderr; problems are reported as errors instead (this reading only)
        with warnings.catch_warnings(), stop_on_sigterm():
            warnings.simplefilter("ignore")
            ckpt = open_checkpoint(path)
            # --activations: a bad --text file or no tokenizer is said before find_positions
            # reads the model through transformers (seconds of imports for a one-line error)
            if cfg.activations:
                from posecards.content.activations import read_text
                from posecards.model.activations import check_tokenizer

                read_text(cfg.text)
                check_tokenizer(ckpt)
            found = find_positions(ckpt, InspectOptions(tensor=cfg.tensor, offset=cfg.offset))
            if cfg.offset is not None and found.kind != "learned":
                raise PosecardsError(
                    f"--offset applies to a learned position table; {ckpt.name} uses {found.kind}"
                )
            out = cfg.out if cfg.out is not None else default_out(ckpt, cfg.weights)
            not_a_folder(out)
            if why := writable(out):
                raise PosecardsError(f"cannot write to --out {out}: {why}")
            if cfg.weights:
                from posecards.content.weights import check_rope

                check_rope(ckpt, found)
            say(f"{ckpt.name}: {found.kind} positions; computing")
            document = None
            if cfg.weights:  # how the trained model uses its frequencies (content/weights.py)
                from posecards.content.weights import (
                    compute_weights_card,
                    weights_json,
                    weights_reading,
                )

                reading = weights_reading(ckpt, found)
                measured = None
                content = compute_weights_card(ckpt, found, reading)
                if cfg.activations:  # the same use, measured on text (content/activations.py)
                    from posecards.content.activations import (
                        activations_json,
                        activations_reading,
                        compute_activations_card,
                    )

                    say(f"{ckpt.name}: running it on text through transformers")
                    on_text = activations_reading(ckpt, reading, cfg.text)
                    measured = activations_json(reading, on_text)
                    content = compute_activations_card(ckpt, reading, on_text)
                document = weights_json(ckpt.name, found, reading, measured)
            elif getattr(found, "measured", None) is not None:
                content = None  # a learned table read from config.json alone: no values
                if any(f != "json" for f in cfg.formats):
                    raise PosecardsError(no_table_values(ckpt.name, found))
            else:
                content = compute_inspection(ckpt, found)
    except KeyboardInterrupt:
        raise Interrupted("nothing was written") from None
    except MemoryError:
        raise PosecardsError(f"out of memory while inspecting {path}") from None
    plan = plan_inspection(cfg, out, ckpt, found, content, document)
    run_plan(plan, say, jobs=cfg.jobs, cache=False, oom=f"out of memory while inspecting {path}")


# -------------------------------------------------------------- the single-file commands


def drawing(module: str, name: str) -> Any:
    """A function of the code that draws, imported when a command that draws in this process
    runs (`figure`, `explore`): importing it here would load matplotlib for every command,
    ``--help`` included (a contract in pyproject.toml: the commands import no matplotlib)."""
    return getattr(importlib.import_module(module), name)


def figure_ids() -> dict[str, int]:
    """Every figure id of the cards, on the card or on figure pages only (from the card text:
    nothing is computed)."""
    from posecards.render.text import load_card_text

    return {fid: c for c in CARD_IDS for fid in load_card_text(c).figure_ids}


def figure(
    figure_id: str,
    params: PEParams,
    lang: str,
    theme: str,
    fmt: str,
    out: Path,
    svg_text: str = "outline",
) -> None:
    """`posecards figure`: one figure on its own, written atomically."""
    render_figure = drawing("posecards.render.figure", "render_figure")
    data = render_figure(figure_id, params, lang, theme, fmt, svg_text=svg_text)
    try:
        write_bytes_atomic(out, data)
    except OSError as exc:
        raise PosecardsError(f"cannot write to --out {out}: {exc.strerror or exc}") from exc


def data(figure_id: str, params: PEParams, fmt: str) -> str:
    """`posecards data`: the numbers behind a figure, as CSV or JSON."""
    from posecards.content import compute_card
    from posecards.render.data import to_csv, to_json

    content = compute_card(figure_ids()[figure_id], params)
    if figure_id not in content.figures:
        raise PosecardsError(
            f"unknown figure id {figure_id!r}; run 'posecards list' to see the ids"
        )
    values = content.figures[figure_id]
    return to_csv(values) if fmt == "csv" else to_json(values)


def rope_calculators(
    head_dim: int, base: float, context: int, target: int | None, smallest: bool, fmt: str
) -> str:
    """`posecards data rope-calculators`: critical dimension, base bound, factors needed."""
    from posecards.content.calculators import rope_calculators as calc
    from posecards.render.data import to_csv, to_json

    values = calc(head_dim, base, context, target, smallest)
    return to_csv(values) if fmt == "csv" else to_json(values)


def list_cards(params: PEParams) -> str:
    """`posecards list`: the cards and their figure ids, titles filled with ``params``."""
    from posecards.content import title_numbers
    from posecards.render.fill import fill
    from posecards.render.text import load_card_text

    lines = []
    for c in CARD_IDS:
        text = load_card_text(c)
        entries = (*text.panels, *text.figures)
        raw = [text.title.en, text.title.zh, *(p.title.en for p in entries)]
        numbers = title_numbers(c, params) if any("{{" in t for t in raw) else {}

        def filled(t: str, where: str, numbers: Mapping[str, Any] = numbers) -> str:
            return fill(t, numbers, where) if "{{" in t else t

        where = text.path.name
        title = f"{filled(text.title.en, where)} / {filled(text.title.zh, where)}"
        lines.append(f"card {c}  {text.slug}: {title}")
        lines += [f"    {p.id:<22} {filled(p.title.en, where)}" for p in text.panels]
        lines += [
            f"    {p.id:<22} {filled(p.title.en, where)}  (figure page only)" for p in text.figures
        ]
    return "\n".join(lines) + "\n"


def placeholders(card: int, params: PEParams) -> str:
    """`posecards placeholders N`: a card's placeholders with their values (card and slides)."""
    from posecards.deck.placeholders import placeholder_report

    return placeholder_report(card, params)


def explore(cfg: ExploreConfig) -> int:
    """`posecards explore`: the interactive page, written atomically; its size in bytes."""
    explore_bytes = drawing("posecards.render.explore", "explore_bytes")
    data = explore_bytes(cfg)
    try:
        write_bytes_atomic(cfg.out, data)
    except OSError as exc:
        raise PosecardsError(f"cannot write to --out {cfg.out}: {exc.strerror or exc}") from exc
    return len(data)


def measure(cfg: MeasureConfig, say: Say | None = None) -> float:
    """`posecards measure`: train and measure; the results file written atomically. Seconds."""
    from posecards.experiment.run import run_all, to_json

    try:
        with stop_on_sigterm():
            doc = run_all(cfg, say)
    except KeyboardInterrupt:
        raise Interrupted(f"{cfg.out} was not written") from None
    except MemoryError:
        raise PosecardsError("out of memory while training") from None
    try:
        write_bytes_atomic(cfg.out, to_json(doc))
    except OSError as exc:
        raise PosecardsError(f"cannot write to --out {cfg.out}: {exc.strerror or exc}") from exc
    seconds: float = doc["environment"]["seconds"]
    return seconds
