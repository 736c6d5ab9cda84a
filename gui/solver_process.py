"""The solver process: runs the app's segmentations away from the window's process.

Why a process and not only a thread: PyMaxflow holds Python's GIL while it solves (about a
second on a 4-megapixel image), which would freeze the window however the work is threaded; a
PyMaxflow solve cannot be interrupted except by ending its process (which the app does when a
newer stroke makes a long solve useless, see ``controller.py``); and a solver that crashes (out
of memory, a driver fault) takes down only this process, which the app reports and restarts.

Protocol, over the standard streams: the app writes pickled ``(kind, payload)`` requests to
stdin and reads pickled replies from stdout, in order:

- ``("ping", None)`` -> ``"ready"``;
- ``("open", Session)`` -> :class:`~graphcut.gui.solve.Opened` (the image itself stays in
  shared memory, see ``sharing.py``);
- ``("solve", Job)`` -> :class:`~graphcut.gui.solve.Outcome`, one per job. Jobs that arrive
  while another is waiting or solving are taken at once (their seed changes count), but only
  the newest is solved: the others are answered ``cancelled``, and a running GPU solve stops
  between launch batches when a newer job arrives.

A reader thread takes requests off stdin while the main thread solves. The process ends when
stdin closes (so also when the app dies). Run as ``python -m graphcut.gui.solver_process``;
Qt is never imported here.
"""

from __future__ import annotations

import pickle
import queue
import sys
import threading

from .solve import Outcome, Solver

_END = object()


class Server:
    """Answers requests on the thread that calls :meth:`run`; :meth:`put` queues a request
    from any thread (the process's stdin reader, or the app's thread client)."""

    def __init__(self, reply, solver: Solver | None = None):
        self._reply = reply
        self._solver = solver or Solver()
        self._inbox: queue.Queue = queue.Queue()
        self._newer_job = threading.Event()  # set when a job arrives; cancels a GPU solve

    def put(self, request) -> None:
        """Queue ``(kind, payload)``, or None for the end of input."""
        self._inbox.put(_END if request is None else request)
        if request is None or request[0] in ("solve", "open"):
            self._newer_job.set()  # after the put: see run()

    def run(self) -> None:
        """Answer requests until the end of input."""
        pending = None  # the newest job taken and not yet solved
        while True:
            if pending is not None and self._inbox.empty():
                self._newer_job.clear()
                # a request put after this check sets the flag again, and cancels the solve
                if self._inbox.empty():
                    self._reply(self._solver.solve(pending, cancel=self._newer_job.is_set))
                    pending = None
                    continue
            request = self._inbox.get()
            if request is _END:
                self._solver.close()
                return
            kind, payload = request
            if kind in ("solve", "open") and pending is not None:
                self._reply(Outcome(pending.number, pending.token, cancelled=True))
                pending = None
            if kind == "solve":
                if self._solver.take(payload):
                    pending = payload
                else:
                    self._reply(self._solver.run(payload))  # answers with the error
            elif kind == "open":
                self._reply(self._solver.open(payload))
            else:
                self._reply("ready")


def serve(requests, replies) -> None:
    """Answer requests from the binary stream ``requests`` on ``replies`` until end of input."""
    def reply(answer) -> None:
        pickle.dump(answer, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()

    server = Server(reply)

    def read() -> None:
        while True:
            try:
                request = pickle.load(requests)
            except (EOFError, OSError, pickle.UnpicklingError):
                server.put(None)
                return
            server.put(request)

    threading.Thread(target=read, name="solver-requests", daemon=True).start()
    server.run()


def main() -> int:
    """Serve solve requests read from stdin, answers written to stdout (the solver
    process of the app); returns the exit status, 0.
    """
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the replies
    serve(requests, replies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
