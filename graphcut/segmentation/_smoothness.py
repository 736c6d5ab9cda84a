"""The smoothness weight ``lam`` chosen automatically: for the histogram model from a box or
lasso, a *collapse guard* between two weights.

A heavier boundary term gives cleaner outlines from a box (composites and photos), but a box
around a small object (a 20-pixel nucleus) can lose the whole object to it. The guard cuts at
the lighter and at the heavier weight and keeps the heavier one's mask unless it holds less
than :data:`GUARD_SHARE` of the lighter one's pixels. Measured on the development sets only
(``bench/lam_sweep.py``; docs/appearance.md, "Smoothness"): box IoU composites 0.642 -> 0.665,
photos 0.436 -> 0.458, one nucleus 0.705 -> 0.712 against the fixed lam 10. The GMM and the
learned model keep their fixed ``lam`` (no guard won on every set for them).

The user's ``lam`` wins: the guard applies only when no ``lam`` was given (neither ``lam=``
nor a model object with its own ``lam``) and the update has a box or lasso.
"""

from __future__ import annotations

from graphcut.models import Histogram

#: (lighter, heavier) smoothness weights of the guard, by model class
GUARDED_LAMS = {Histogram: (10.0, 20.0)}
#: the heavier weight's mask is kept when it holds at least this share of the lighter one's
#: object pixels
GUARD_SHARE = 0.8


def guarded_lams(appearance, lam):
    """The (lighter, heavier) weights of the collapse guard for this model, or None.

    Parameters
    ----------
    appearance : AppearanceModel
        The resolved model object.
    lam : float or None
        The ``lam`` the caller gave (None: not given).

    Returns
    -------
    tuple of float or None
        ``(lighter, heavier)`` (dimensionless weights of the n-links, as ``lam``) when ``lam``
        is None, the model is exactly :class:`~graphcut.models.Histogram` and its object does
        not set its own ``lam``; None otherwise (the fixed ``lam`` applies).

    Examples
    --------
    >>> from graphcut.models import GMM, Histogram
    >>> guarded_lams(Histogram(), None)
    (10.0, 20.0)
    >>> guarded_lams(Histogram(), 10) is None, guarded_lams(GMM(), None) is None
    (True, True)
    """
    if lam is not None or "lam" in vars(appearance):
        return None
    return GUARDED_LAMS.get(type(appearance))


def keep_heavier(lighter, heavier, share=GUARD_SHARE) -> bool:
    """Whether the heavier weight's result is kept: its object pixels (non-zero, any label)
    are at least ``share`` times the lighter weight's.

    Parameters
    ----------
    lighter, heavier : array
        Masks or label images (NumPy or CuPy) of the two cuts, background 0.
    share : float
        The fraction in [0, 1].

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> light = np.zeros((4, 4), bool); light[:2] = True
    >>> keep_heavier(light, light[::-1] & light), keep_heavier(light, light)
    (False, True)
    """
    return int((heavier != 0).sum()) >= share * int((lighter != 0).sum())


__all__ = ["GUARDED_LAMS", "GUARD_SHARE", "guarded_lams", "keep_heavier"]
