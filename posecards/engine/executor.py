"""Running a plan: every unit from the cache or rendered, then the manifest, all in memory.

Units found in the unit cache are loaded; the others run as soon as the units they need are
done: units that draw (and those that assemble files in a process of their own) in a pool of
fresh processes (one unit per process: matplotlib keeps font and text-layout state between
figures, which can move a coordinate by an ulp, so a figure's bytes would otherwise depend on
what the same process drew before), the others in this process. Progress counts the units of
the pool as renders ("3 of 21 deck renders up to date in the cache"). Each
fresh process is forked from a server that has imported the plan's ``preload`` modules once
(the same state for every unit, without each paying for the imports), or spawned where there
is no fork server.
Progress is reported as each unit finishes, and while a unit takes long; the outputs come out in
one sorted order whatever finished first. Ctrl-C or SIGTERM (made a KeyboardInterrupt by the
caller) stops the workers at once.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from posecards.engine import unitcache
from posecards.engine.inputs import text_digest
from posecards.engine.manifest import MANIFEST, manifest_bytes
from posecards.engine.units import Context, Plan, Rendered, RenderFn, Say, Unit, quiet
from posecards.errors import PosecardsError

# no line for this long: say which units are still being drawn
HEARTBEAT_S = 3.0


class WorkerLost(PosecardsError):
    """A drawing process was killed (by a signal, or the out-of-memory killer)."""


def _call(render: RenderFn, job: Any, ctx: Context) -> Rendered:
    return render(job, ctx)


def _fresh_processes(preload: tuple[str, ...]) -> Any:
    """Where each drawing unit gets its own fresh process: forked from a server that has
    imported ``preload`` once (every unit starts from that same state, not from what another
    unit drew), or spawned where there is no fork server (Windows) or nothing to preload."""
    if not preload or "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # used when the server starts (once a process); engine.forked first: a process started
    # while the build stops prints no traceback
    ctx.set_forkserver_preload(["posecards.engine.forked", *preload])
    return ctx


def _stop_fork_server() -> None:
    """Stop this process's fork server (if one runs) once its pool is done, and wait for it:
    the CPU time of the processes it forked then counts as this process's children's, as a
    spawned pool's does (benchmarks/run.py measures it so); the next run starts a new one."""
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if stop is not None:
        stop()


def unit_keys(plan: Plan) -> dict[str, str | None]:
    """The cache key of every unit (None: not cached, nor is anything that needs it)."""
    digests: dict[str, str] = {}
    keys: dict[str, str | None] = {}
    for u in plan.units:
        needs = [keys[n] for n in u.needs]
        if not u.cache or any(k is None for k in needs):
            keys[u.name] = None
            continue
        for name in u.texts:
            if name not in digests:
                digests[name] = text_digest(plan.sources[name])
        texts = {n: digests[n] for n in u.texts}
        keys[u.name] = unitcache.unit_key(u, texts, [k for k in needs if k], plan.libraries)
    return keys


def run(plan: Plan, say: Say = quiet, use_cache: bool = True, jobs: int = 1) -> dict[str, bytes]:
    """Every output file of the plan, in memory, sorted by path, the manifest last."""
    keys = unit_keys(plan)
    done: dict[str, Rendered] = {}
    for u in plan.units:
        key = keys[u.name]
        if use_cache and key is not None and (hit := unitcache.load(key)) is not None:
            done[u.name] = hit
    drawn = [u for u in plan.units if u.spawn]
    if any(u.cache for u in drawn):
        hits = sum(u.name in done for u in drawn)
        say(f"{hits} of {len(drawn)} {plan.what} renders up to date in the cache")
    todo = [u for u in plan.units if u.name not in done]
    _Runner(plan, keys, done, say, use_cache, jobs).run(todo)
    files: dict[str, bytes] = {}
    for u in plan.units:
        files.update(done[u.name].files)
    files = dict(sorted(files.items()))
    files[MANIFEST] = manifest_bytes(plan, files)
    return files


class _Heartbeat:
    """While a unit runs in this process: its progress lines, and one every HEARTBEAT_S
    seconds in which it said nothing."""

    def __init__(self, say: Say, name: str) -> None:
        self.outer, self.name = say, name
        self.last = time.monotonic()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.beat, daemon=True)

    def say(self, msg: str) -> None:
        self.last = time.monotonic()
        self.outer(msg)

    def beat(self) -> None:
        said = self.last
        while not self.stop.wait(0.5):
            now = time.monotonic()
            if now - max(self.last, said) >= HEARTBEAT_S:
                said = now
                self.outer(f"still making {self.name} (nothing new for {now - self.last:.0f} s)")

    def __enter__(self) -> Say:
        self.thread.start()
        return self.say

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def _stop_workers(pool: ProcessPoolExecutor, grace_s: float = 5.0) -> None:
    """Terminate every worker of ``pool``, including a replacement the pool may start while the
    others are stopping (max_tasks_per_child=1), and kill any still alive after ``grace_s``:
    waiting on an idle replacement could hang the build after its error."""
    deadline = time.monotonic() + grace_s
    while True:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=0.5)
        alive = [p for p in procs if p.is_alive()]
        later = [p for p in (getattr(pool, "_processes", None) or {}).values() if p not in procs]
        if not alive and not later:
            return
        if time.monotonic() > deadline:
            for proc in alive + later:
                proc.kill()
            return


class _Runner:
    def __init__(
        self,
        plan: Plan,
        keys: Mapping[str, str | None],
        done: dict[str, Rendered],
        say: Say,
        use_cache: bool,
        jobs: int,
    ) -> None:
        self.plan, self.keys, self.done, self.say = plan, keys, done, say
        self.use_cache, self.jobs = use_cache, jobs
        self.workers = 1

    def finish(self, unit: Unit, result: Rendered) -> None:
        self.done[unit.name] = result
        self.store(unit, result)

    def store(self, unit: Unit, result: Rendered) -> None:
        key = self.keys[unit.name]
        if self.use_cache and key is not None:
            unitcache.store(key, result)

    def inline(self, unit: Unit) -> None:
        self.say(f"{unit.name}: making {len(unit.files)} file(s)")
        with _Heartbeat(self.say, unit.name) as say:
            result = unit.render(unit.job, Context({n: self.done[n] for n in unit.needs}, say))
        self.finish(unit, result)
        self.say(f"{unit.name}: made {len(result.files)} file(s)")

    def run(self, todo: list[Unit]) -> None:
        drawn = [u for u in todo if u.spawn]
        if not drawn:
            for unit in todo:
                self.inline(unit)
            return
        workers = self.workers = max(1, min(len(drawn), self.jobs))
        self.say(f"rendering {len(drawn)} {self.plan.what} unit(s) in {workers} process(es)")
        for note in dict.fromkeys(u.note for u in drawn if u.note):
            self.say(note)
        # the plan's preload and what the units to draw import, once (not those found cached)
        preload = dict.fromkeys((*self.plan.preload, *(m for u in drawn for m in u.preload)))
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=_fresh_processes(tuple(preload)),
            max_tasks_per_child=1,
        )
        try:
            self._loop(pool, todo)
        except BrokenProcessPool:
            raise WorkerLost(
                f"a drawing process was killed (out of memory?); {self.plan.out} was left as it was"
            ) from None
        except BaseException:
            # stop now: queued units are dropped and running ones killed, not waited for
            _stop_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)  # quick: the workers are gone
            raise
        pool.shutdown(wait=True)
        # only here: after Ctrl-C/SIGTERM the server's lock may be held by the interrupted code
        _stop_fork_server()

    def _loop(self, pool: ProcessPoolExecutor, todo: list[Unit]) -> None:
        """Start each unit once its ``needs`` are done and its ``after`` units have finished,
        in plan order: a unit of the pool when a process is free (so a unit that becomes ready
        late, such as card 1 in Chinese, is next rather than behind a queue), a unit of this
        process on a thread of its own, one at a time (the processes keep drawing while it
        runs)."""
        waiting = list(todo)
        running: dict[Future[Any], Unit] = {}
        last = time.monotonic()

        def ready() -> list[Unit]:
            pending = {u.name for u in waiting} | {u.name for u in running.values()}
            return [
                u
                for u in waiting
                if all(n in self.done for n in u.needs) and not pending.intersection(u.after)
            ]

        def start() -> None:
            if all(u.spawn for u in running.values()):
                here = next((u for u in ready() if not u.spawn), None)
                if here is not None:
                    waiting.remove(here)
                    running[self.in_thread(here)] = here
            drawing = sum(u.spawn for u in running.values())
            for unit in [u for u in ready() if u.spawn][: self.workers - drawing]:
                waiting.remove(unit)
                # a fresh process gets the results it needs without their files, unless it
                # assembles them
                needs = {
                    n: self.done[n] if unit.needs_files else Rendered({}, {}, self.done[n].meta)
                    for n in unit.needs
                }
                running[pool.submit(_call, unit.render, unit.job, Context(needs))] = unit

        while waiting or running:
            start()
            if not running:
                if waiting:  # a need that is in no plan: a bug in the plan
                    raise RuntimeError(f"units wait for nothing: {[u.name for u in waiting]}")
                break
            finished, _ = wait(running, timeout=HEARTBEAT_S, return_when=FIRST_COMPLETED)
            if not finished:
                # (a unit of this process says its own progress)
                busy = [u.name for f, u in running.items() if u.spawn and f.running()]
                if busy:
                    quiet_s = time.monotonic() - last
                    self.say(
                        f"still rendering {', '.join(busy)} (nothing finished for {quiet_s:.0f} s)"
                    )
                continue
            drawn: list[tuple[Unit, Rendered]] = []
            for fut in sorted(finished, key=lambda f: todo.index(running[f])):
                unit = running.pop(fut)
                if unit.spawn:
                    drawn.append((unit, fut.result()))
                    self.done[unit.name] = drawn[-1][1]
                    self.say(f"{unit.name} rendered")
                else:
                    fut.result()  # finished on its thread; its error is raised here
            start()  # the next units start drawing while this process stores the results
            for unit, result in drawn:
                self.store(unit, result)
            last = time.monotonic()

    def in_thread(self, unit: Unit) -> Future[None]:
        """``inline(unit)`` on a daemon thread (Ctrl-C does not wait for it); its future."""
        fut: Future[None] = Future()

        def work() -> None:
            try:
                self.inline(unit)
            except BaseException as e:  # re-raised in the main thread by fut.result()
                fut.set_exception(e)
            else:
                fut.set_result(None)

        threading.Thread(target=work, name=unit.name, daemon=True).start()
        return fut
