"""The app's end of a solver: send requests, receive replies on a thread. No Qt in here.

A client talks to one :class:`~graphcut.gui.solver_process.Server`, either in a child process
(:class:`ProcessClient`, what the app uses: see ``solver_process.py`` for why) or on a thread of
this process (:class:`ThreadClient`, when no process can be started, and for quick tests).
Replies are read on a thread of the client's own and handed to ``on_reply(client, reply)``
there; the controller (``controller.py``) moves them to its own thread.

Masks arrive as :class:`~graphcut.gui.sharing.MaskUpdate`\\ s; the reader thread applies each
to a copy of the previous mask, so that the outcome handed on carries the whole new mask
(``Outcome.mask``, never modified afterwards) and the slices that changed, and nothing of that
work happens on the window's thread.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
import time

import numpy as np

from .solve import Opened, Outcome
from .solver_process import Server

log = logging.getLogger("graphcut.gui")


class SolverCrashed(RuntimeError):
    """The solver process ended or stopped answering."""


@dataclasses.dataclass(frozen=True)
class Crashed:
    """Reply standing for the answers a crashed solver process will never give."""

    message: str


class _Client:
    """What both clients share: turning replies into whole masks, and timing."""

    def __init__(self, on_reply, name: str):
        self.on_reply = on_reply
        self.name = name
        self._masks: dict[int, np.ndarray] = {}  # the last mask received, by preview factor
        self._lock = threading.Lock()

    def _deliver(self, reply) -> None:
        received = time.perf_counter()
        if isinstance(reply, Opened):
            with self._lock:
                self._masks.clear()  # the solver starts over with whole masks
        elif isinstance(reply, Outcome) and reply.update is not None:
            with self._lock:
                previous = self._masks.get(reply.factor)
                if previous is None or previous.shape != reply.update.shape:
                    mask = np.zeros(reply.update.shape, dtype=bool)
                else:
                    mask = previous.copy()
                region = reply.update.apply(mask)
                mask.flags.writeable = False
                self._masks[reply.factor] = mask
            seconds = {**reply.seconds, "apply": time.perf_counter() - received}
            reply = dataclasses.replace(reply, update=None, mask=mask, region=region,
                                        received=received, seconds=seconds)
        self.on_reply(self, reply)


class ProcessClient(_Client):
    """A ``python -m graphcut.gui.solver_process`` child, started on first use and restarted
    after a crash or a :meth:`kill`.

    :meth:`send` never blocks: requests are pickled and written by a writer thread (which also
    starts the child), replies read by a reader thread.
    """

    COMMAND = (sys.executable, "-m", "graphcut.gui.solver_process")
    can_interrupt_cpu = True  # killing the process stops a PyMaxflow solve

    def __init__(self, on_reply, *, name: str = "solver", command=COMMAND, nice: int = 0):
        """``nice``: added to the child's scheduling niceness (POSIX), so that a solver whose
        work can wait yields the CPU to the others."""
        super().__init__(on_reply, name)
        self.command = list(command)
        self.nice = int(nice)
        self._process: subprocess.Popen | None = None
        self._generation = 0
        self._outbox: queue.Queue = queue.Queue()
        self._writer: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.start_seconds = float("nan")  # the last start, until the child answered a ping

    def send(self, kind: str, payload) -> None:
        """Queue one request for the child (started first if needed)."""
        if self._writer is None:
            self._writer = threading.Thread(target=self._write, name=f"{self.name}-requests",
                                            daemon=True)
            self._writer.start()
        self._outbox.put((self._generation, kind, payload))

    def _write(self) -> None:
        while True:
            item = self._outbox.get()
            if item is None:
                return
            generation, kind, payload = item
            try:
                with self._start_lock:  # a kill or close waits for a start to finish
                    if generation != self._generation:
                        continue  # queued before a kill or close: nobody waits for it
                    process = self._ensure_started(generation)
                pickle.dump((kind, payload), process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                process.stdin.flush()
            except (OSError, ValueError, SolverCrashed, EOFError, pickle.UnpicklingError) as error:
                with self._start_lock:
                    if generation != self._generation:
                        continue  # killed or closed meanwhile: expected
                    self._generation += 1  # drop the rest of this generation's requests
                    process, self._process = self._process, None
                self.on_reply(self, Crashed(_crash_text(error, _end(process))))

    def _ensure_started(self, generation) -> subprocess.Popen:
        """The running child, or a new one that answered a ping (call with the start lock)."""
        process = self._process
        if process is not None and process.poll() is None:
            return process
        started = time.perf_counter()
        with self._lock:
            self._masks.clear()
        process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._process = process
        if self.nice and hasattr(os, "setpriority"):
            try:
                os.setpriority(os.PRIO_PROCESS, process.pid,
                               os.getpriority(os.PRIO_PROCESS, process.pid) + self.nice)
            except OSError as error:
                log.debug("cannot lower the priority of the %s solver: %s", self.name, error)
        pickle.dump(("ping", None), process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        process.stdin.flush()
        if pickle.load(process.stdout) != "ready":
            raise SolverCrashed("the solver process gave an unexpected answer")
        self.start_seconds = time.perf_counter() - started
        threading.Thread(target=self._read, args=(process, generation),
                         name=f"{self.name}-replies", daemon=True).start()
        return process

    def _read(self, process, generation) -> None:
        while True:
            try:
                reply = pickle.load(process.stdout)
            except (EOFError, OSError, ValueError, pickle.UnpicklingError) as error:
                with self._start_lock:
                    if generation != self._generation:
                        return  # killed or closed on purpose
                    self._generation += 1
                    if self._process is process:
                        self._process = None
                self.on_reply(self, Crashed(_crash_text(error, _end(process))))
                return
            if generation != self._generation:
                return  # from a process killed on purpose: nobody waits for it
            self._deliver(reply)

    def kill(self) -> None:
        """Stop the child at once (a running solve with it, PyMaxflow's too); requests and
        replies not yet through are dropped. The next :meth:`send` starts a new child."""
        with self._start_lock:
            self._generation += 1
            process, self._process = self._process, None
        _end(process, kill=True)

    def close(self) -> None:
        """End the child at once (it holds nothing worth waiting for) and drop what it would
        still send."""
        self.kill()
        if self._writer is not None:
            self._outbox.put(None)
            self._writer.join()
            self._writer = None


def _end(process, *, kill: bool = False):
    """Make sure ``process`` has ended (killed when ``kill``, or when it does not end within
    a second), close its pipes; returns its exit status (None for no process)."""
    if process is None:
        return None
    if kill:
        process.kill()
    try:
        status = process.wait(1.0)
    except subprocess.TimeoutExpired:
        process.kill()
        status = process.wait()
    for stream in (process.stdin, process.stdout):
        try:
            stream.close()
        except (OSError, ValueError):
            pass
    return status


def _crash_text(error, status=None) -> str:
    status = "" if status is None else f"exit status {status}; "
    return (f"the solver process stopped unexpectedly ({status}{type(error).__name__}); it "
            "restarts with the next stroke")


class ThreadClient(_Client):
    """A solver on a thread of this process: light, but a PyMaxflow solve holds the GIL (the
    window stutters on large images) and cannot be interrupted."""

    can_interrupt_cpu = False
    start_seconds = 0.0

    def __init__(self, on_reply, *, name: str = "solver"):
        super().__init__(on_reply, name)
        self._server = None
        self._thread = None

    @property
    def running(self) -> bool:
        """Whether the solver thread is running."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the solver thread (nothing if it runs)."""
        if self.running:
            return
        self._server = Server(self._deliver)
        self._thread = threading.Thread(target=self._server.run, name=f"{self.name}-thread",
                                        daemon=True)
        self._thread.start()

    def send(self, kind: str, payload) -> None:
        """Send a request (``kind``, ``payload``) to the solver thread, starting it."""
        self.start()
        self._server.put((kind, payload))

    def kill(self) -> None:
        """Cannot stop a running solve: lets it finish and drops nothing."""

    def close(self) -> None:
        """Stop the solver thread and wait for it to end."""
        if self._server is not None:
            self._server.put(None)
            self._thread.join()
            self._server = self._thread = None
