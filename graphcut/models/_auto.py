"""``Auto``: the appearance model that picks the model measured best for the image.

No single model won on both kinds of real images of the development sets
(docs/appearance.md, "What the default is and why"): GrabCut's mixtures with a box core win on
colour photographs, the learned classifier on grey microscopy, where the mixtures collapse.
``Auto`` is one model object (one name in settings files, the CLI and the app) that becomes
one of the two once the image is known (:meth:`Auto.for_channels`, called by
:class:`graphcut.Segmenter` with the image's channel count):

- colour (3 or more channels): ``GMM(core=0.4, warm=True)``: GrabCut's iterations for the
  box alone, then one warm refit and one cut per stroke (live);
- grey (one channel, images and volumes): ``Learned()``.
"""

from __future__ import annotations

from ._base import AppearanceModel
from ._gmm import GMM
from ._learned import Learned

#: the colour branch's knobs (chosen on the photo cut-outs' development split)
COLOUR_MODEL = {"core": 0.4, "warm": True}


class Auto(AppearanceModel):
    """``GMM(core=0.4, warm=True)`` for colour images, ``Learned()`` for grey images and
    volumes (see this module's notes); ``model="auto"``.

    Parameters
    ----------
    **knobs
        ``iterations``, ``seed_share``, ``locality``, ``far_cost``: given to the chosen model
        (:class:`~graphcut.models.AppearanceModel`); ``None``: the chosen model's default.

    Examples
    --------
    >>> from graphcut.models import Auto
    >>> Auto().for_channels(3).settings()
    {'model': 'gmm', 'core': 0.4, 'warm': True}
    >>> type(Auto(seed_share=0.2).for_channels(1)).__name__, Auto(seed_share=0.2).settings()
    ('Learned', {'model': 'auto', 'seed_share': 0.2})
    """

    name = "auto"
    # placeholders until the image is known (:meth:`for_channels` gives the chosen model's)
    lam = GMM.lam
    iterations = None
    seed_share = None
    locality = None
    far_cost = None
    texture = 0
    knobs = ("iterations", "seed_share", "locality", "far_cost")

    def for_channels(self, channels: int) -> AppearanceModel:
        """The model this one stands for on an image of ``channels`` channels (a new object,
        with the knobs given to this one and its ``lam`` if one was set).

        Parameters
        ----------
        channels : int
            The image's channel count (1 grey, 3 RGB, ...).

        Returns
        -------
        AppearanceModel
            ``GMM(core=0.4, warm=True)`` for 3 or more channels, ``Learned()`` otherwise.
        """
        given = {key: getattr(self, key) for key in self.knobs
                 if getattr(self, key) is not None}
        chosen = GMM(**COLOUR_MODEL, **given) if channels >= 3 else Learned(**given)
        if "lam" in vars(self):
            chosen.lam = self.lam
        return chosen

    def fit(self, features, samples):
        raise RuntimeError(_UNCHOSEN)

    def costs(self, features):
        raise RuntimeError(_UNCHOSEN)


_UNCHOSEN = ("Auto stands for another model: use for_channels(channels) first "
             "(graphcut.Segmenter does)")
