"""GPU minimum cuts of the expansion moves, solved on the balanced network.

An expansion move's network (:mod:`._expansion`) carries each edge's whole capacity on its
forward arc and puts ``+w`` / ``-w`` on the terminals of the edge's two pixels, so every pixel
of a region of one label has terminal capacities: excess that the push-relabel core pushes to
its neighbours' sink capacities all over the image. :func:`._balance.balanced` shares each
edge's capacity between its two arcs and nets the terminals, after which a region of one label
(neither ``alpha``) holds only its data costs' preferences: its pixels prefer to keep their
label and carry no sink capacity, so less excess moves inside regions (measured on an H100: an
object's move 10-20 % faster, a stroke with 3 objects at 4 MP 0.157-0.165 -> 0.135-0.149 s;
the global relabels, about 1 ms each at 4 MP, cost the same either way). The balanced network
has the same minimum cuts, so the same source side (the largest one) and the same flow less a
known offset: the result is the one ``min_cut(network, device="cuda")`` gives.
"""

from __future__ import annotations

from graphcut.solver import CutResult, GridNetwork, min_cut

from ._balance import balanced

# the moves are cut on the balanced network; False: on the move's own network (the state
# before the fifteenth session, for A/B runs)
BALANCE = True


def device_move_cut(network: GridNetwork, label=None) -> CutResult:
    """The minimum cut of an expansion move's network on the GPU: the flow and source side
    of ``min_cut(network, device="cuda")`` (``stats["balanced"]`` says when the balanced
    network was solved; ``label`` is unused, as in :class:`~._host_cuts.HostMoveCuts`)."""
    even = balanced(network) if BALANCE else None
    if even is None:
        return min_cut(network, device="cuda")
    cut = min_cut(even[0], device="cuda")
    return CutResult(cut.flow + even[1], cut.source_side, cut.backend,
                     dict(cut.stats, balanced=True))


__all__ = ["device_move_cut"]
