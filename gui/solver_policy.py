"""Which exact solver takes a new job, and when the controller ends a running CPU solve
(``controller.py``). No Qt.

A running PyMaxflow solve cannot be interrupted, only its process ended: that is done when
the next job cannot reuse the running solve's work (another image, another lambda, or a
running solve through ``graphcut.segment``'s pipeline: several objects, a box or lasso, the
GMM, the learned model, which leave no flow for the next job) and the solve still has longer
to run than a new process takes to start. For a seed edit of the plain energy it lets the
solve finish: ending it would lose the graph and flow that the next solve reuses (a new
process must start from scratch).
"""

from __future__ import annotations

import time

from .controller_parts import Channel


def pick_exact(channels, token: int, first: Channel) -> Channel:
    """The exact solver for a new job among ``channels``: an idle one (one that holds the
    image ``token``, then the one that solved last, whose state is nearest), else the one
    whose running job was sent first (it finishes first; it then solves only the newest job
    it has). ``first`` (the controller's first exact solver) is always ready: it opens the
    image when told.

    Parameters
    ----------
    channels : list of Channel
        The exact solvers (the first, and the spare when there is one).
    token : int
        The open image.
    first : Channel
        The first exact solver.

    Returns
    -------
    Channel
    """
    ready = [c for c in channels if c is first or (c.token == token and c.opened == token)]
    idle = [c for c in ready if not c.outstanding]
    if idle:
        return max(idle, key=lambda c: (c.token == token, c.last_number))
    return min(ready, key=lambda c: min(job[0] for job in c.outstanding.values()))


def restart_pays(channel: Channel, lam: float | None) -> bool:
    """Whether ending ``channel``'s running CPU solve gets a new job (at smoothness ``lam``)
    its mask sooner (module docstring). A pipeline solve is expected to take as long as the
    last one, or, before any, one solve from scratch per label in it.

    Parameters
    ----------
    channel : Channel
        An exact solver.
    lam : float or None
        The new job's smoothness weight (None: the model's).

    Returns
    -------
    bool
        False while any estimate is unknown (nan), or when the solver cannot be interrupted.
    """
    if not (channel.outstanding and channel.backend == "cpu"
            and channel.client.can_interrupt_cpu):
        return False
    sent, fresh, plain, labels = min(channel.outstanding.values())
    if plain and channel.lam == lam:
        return False  # the next job re-solves incrementally from this solve's flow
    if plain:
        expected = channel.fresh_seconds if fresh else channel.incremental_seconds
    elif channel.pipeline_seconds == channel.pipeline_seconds:
        expected = channel.pipeline_seconds
    else:
        expected = channel.fresh_seconds * max(labels, 2)
    remaining = expected - (time.perf_counter() - sent)
    restart = channel.client.start_seconds + channel.opened_seconds
    return bool(remaining > restart)


__all__ = ["pick_exact", "restart_pays"]
