"""Segmentation off the GUI thread: a ``QThread`` worker that talks to the solver process.

:class:`SegmentationWorker` lives on its own thread; the window ``submit``\\ s it a
:class:`~graphcut.gui.solve.Job` and it emits ``done`` with the
:class:`~graphcut.gui.solve.Outcome`. It forwards jobs to a :class:`SolverProcess` (see
``solver_process.py`` for why a process), and solves on its own thread only when no process can
be started. Which outcomes are still wanted is the window's business: a worker drops nothing.
"""

from __future__ import annotations

import dataclasses
import logging
import pickle
import subprocess
import sys

from PyQt6.QtCore import QObject, pyqtSignal, pyqtSlot

from .solve import Job, Outcome, Solver

log = logging.getLogger("graphcut.gui")


class SolverCrashed(RuntimeError):
    """The solver process ended or stopped answering during a request."""


class SolverProcess:
    """A ``python -m graphcut.gui.solver_process`` child, started on first use and restarted
    after a crash. Not thread-safe: one worker thread owns it."""

    COMMAND = (sys.executable, "-m", "graphcut.gui.solver_process")

    def __init__(self, command=COMMAND):
        self.command = list(command)
        self._process: subprocess.Popen | None = None
        self._image_token = None  # the image the child holds

    def request(self, kind: str, payload=None):
        """Send one request and wait for its reply (the GIL is free while waiting).

        Raises:
            SolverCrashed: the process died; the next request starts a new one.
        """
        if self._process is None or self._process.poll() is not None:
            self._start()
        try:
            pickle.dump((kind, payload), self._process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self._process.stdin.flush()
            return pickle.load(self._process.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as error:
            status = self.close()
            raise SolverCrashed(f"the solver process stopped unexpectedly (exit status "
                                f"{status}; {type(error).__name__}); it restarts with the next "
                                "stroke") from None

    def solve(self, job: Job) -> Outcome:
        """Solve ``job``, sending its image only when the child does not hold it yet."""
        if self._image_token == job.image_token:
            job = dataclasses.replace(job, image=None)
        outcome = self.request("solve", job)
        self._image_token = job.image_token if outcome.error is None else None
        return outcome

    def prepare(self, job: Job) -> Outcome:
        """Send a newly opened image ahead of the first stroke and let the child warm its
        session up (``Solver.prepare``)."""
        outcome = self.request("prepare", job)
        self._image_token = job.image_token if outcome.error is None else None
        return outcome

    def _start(self) -> None:
        self._image_token = None
        self._process = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE)

    def kill(self) -> None:
        """Stop the child at once, from any thread: a request waiting on it fails with
        :class:`SolverCrashed`."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()

    def close(self, timeout: float = 5.0):
        """End the child (closing its input ends it); returns its exit status or None."""
        process, self._process = self._process, None
        self._image_token = None
        if process is None:
            return None
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()


class SegmentationWorker(QObject):
    """Lives on a worker ``QThread``; ``submit`` it a :class:`Job`, it emits ``done``.

    Args:
        use_process: solve in a :class:`SolverProcess` (the default of the app); False solves
            on the worker thread itself (light, but PyMaxflow then blocks the window while it
            solves large images).
    """

    done = pyqtSignal(object)  # Outcome

    def __init__(self, *, use_process: bool = True):
        super().__init__()
        self._process = SolverProcess() if use_process else None
        self._solver = Solver()
        self._aborted = False

    @pyqtSlot()
    def warm_up(self) -> None:
        """Start the solver process ahead of the first stroke; fall back to the thread."""
        if self._process is None or self._aborted:
            return
        try:
            if self._process.request("ping") != "ready":
                raise SolverCrashed("unexpected reply")
        except (SolverCrashed, OSError) as error:
            if self._aborted:
                return
            log.warning("cannot start the solver process (%s); solving on a thread instead",
                        error)
            self._process.close()
            self._process = None

    @pyqtSlot(object)
    def prepare(self, job: Job) -> None:
        """Warm the solver up for a newly opened image (``job.seeds`` unused); no outcome is
        emitted, a failure is only logged (the first stroke then does the work)."""
        if self._aborted:
            return
        try:
            if self._process is not None:
                outcome = self._process.prepare(job)
            else:
                outcome = self._solver.prepare(job)
        except SolverCrashed as error:
            outcome = Outcome(job.number, error=str(error))
        if outcome.error:
            log.info("preparing the solver for image %d failed: %s", job.image_token,
                     outcome.error)

    @pyqtSlot(object)
    def submit(self, job: Job) -> None:
        if self._aborted:
            return
        if self._process is not None:
            try:
                outcome = self._process.solve(job)
            except SolverCrashed as error:
                outcome = Outcome(job.number, error=str(error))
        else:
            outcome = self._solver.run(job)
        if outcome.error:
            log.debug("segmentation job %d failed: %s\n%s", job.number, outcome.error,
                      outcome.details)
        self.done.emit(outcome)

    def abort(self) -> None:
        """Stop a running solve now (from any thread); the app is closing."""
        self._aborted = True
        if self._process is not None:
            self._process.kill()

    def close(self) -> None:
        """End the solver process (call once the worker's thread has finished)."""
        if self._process is not None:
            self._process.close()
