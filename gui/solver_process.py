"""The solver process: runs the app's segmentations away from the window's process.

Why a process and not only a thread: PyMaxflow holds Python's GIL while it solves (about a
second on a 4-megapixel image), which would freeze the window however the work is threaded; and
a solver that crashes (out of memory, a driver fault) takes down only this process, which the
app reports and restarts.

Protocol, over the standard streams: the app writes pickled ``(kind, payload)`` requests to
stdin and reads one pickled reply per request from stdout. Kinds: ``"ping"`` -> ``"ready"``;
``"solve"`` (a :class:`~graphcut.gui.solve.Job`) -> an :class:`~graphcut.gui.solve.Outcome`;
``"prepare"`` (a Job for a newly opened image) -> an Outcome, once the session is warm.
The process ends when stdin closes (so also when the app dies). Run as
``python -m graphcut.gui.solver_process``; Qt is never imported here.
"""

from __future__ import annotations

import pickle
import sys

from .solve import Solver


def serve(requests, replies) -> None:
    """Answer requests from the binary stream ``requests`` on ``replies`` until end of input."""
    solver = Solver()
    while True:
        try:
            kind, payload = pickle.load(requests)
        except EOFError:
            return
        if kind == "solve":
            reply = solver.run(payload)
        elif kind == "prepare":
            reply = solver.prepare(payload)
        else:
            reply = "ready"
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


def main() -> int:
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the replies
    serve(requests, replies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
