"""``Auto``: the appearance model that picks the model measured best for the image.

No single model won on both kinds of real images of the development sets
(docs/appearance.md, "What the default is and why"): GrabCut's mixtures with a box core win on
colour photographs, the learned classifier on microscopy (grey or colour), where the mixtures
collapse. ``Auto`` is one model object (one name in settings files, the CLI and the app) that
becomes one of the two once the image is known (:meth:`Auto.for_image`, called by
:class:`graphcut.Segmenter` with the image):

- a colour photograph: ``GMM(core=0.4, warm=True, outline=8, stroke_reach=0.2, locality=4,
  prune=1, texture=0, stroke_share=0.05)``: GrabCut's iterations for the box alone, then one
  warm refit and one cut per stroke (live); the object costs more near the box's outline (``outline``, since the ninth
  session); from strokes alone the far pixels start as background and strokes act more
  locally (``stroke_reach``, ``locality``: since the tenth session); after the box's
  iterations the object's Gaussians the background explains as well are dropped (``prune``,
  since the twelfth session; colour photographs only); the mixtures read the colours alone,
  without the local-contrast channel (``texture=0``, since the fourteenth session: a click
  turns fewer pixels wrong elsewhere); from strokes alone the seeds weigh 5 % of the image's
  pixels per label in the samples instead of 10 % (``stroke_share``, since the nineteenth
  session: the coarse iterations learn more from the mask);
- a grey photograph (since the eleventh session): the same GMM without ``prune`` and
  ``stroke_share`` and with the local-contrast channel (the GMM's default ``texture``, 4
  pixels); on the grey development photographs it needs far fewer clicks than ``Learned()`` (box NoC@90
  11.1 against 16.4, strokes alone 13.4 against 20), though ``Learned()``'s mask from the box
  alone is better (box IoU 0.526 against 0.658);
- anything else: ``Learned()``: grey micrographs (dyes on a dark background), volumes, and
  colour micrographs (stained brightfield sections, fluorescence stored as RGB), told from
  photographs by fixed rules on a few thousand of the image's pixels
  (:func:`graphcut.models.colour_statistics`, :func:`graphcut.models.grey_statistics`).
"""

from __future__ import annotations

from ._base import AppearanceModel
from ._gmm import GMM
from ._image_kind import colour_statistics, grey_statistics
from ._learned import Learned

#: the colour branch's knobs (chosen on the photo cut-outs' development split)
COLOUR_MODEL = {"core": 0.4, "warm": True, "outline": 8.0, "stroke_reach": 0.2,
                "locality": 4.0, "prune": 1.0, "texture": 0, "stroke_share": 0.05}
#: the knobs of :data:`COLOUR_MODEL` a grey photograph's GMM goes without (``prune``: on
#: the grey cut-outs' development split it lowered the box IoU 0.620 -> 0.531, the object's
#: own grey levels being shared with the background's; ``texture=0``: there the grey level
#: alone lowered the box IoU 0.522 -> 0.346, the local contrast being the second feature;
#: ``stroke_share``: chosen on the colour cut-outs, not measured on grey ones)
COLOUR_ONLY = ("prune", "texture", "stroke_share")


class Auto(AppearanceModel):
    """:data:`COLOUR_MODEL`'s GMM for colour and grey photographs, ``Learned()`` for grey
    micrographs, volumes and colour micrographs (see this module's notes); ``model="auto"``.

    Parameters
    ----------
    **knobs
        ``iterations``, ``seed_share``, ``locality``, ``far_cost``: given to the chosen model
        (:class:`~graphcut.models.AppearanceModel`); ``None``: the chosen model's default. A
        ``seed_share`` given here also weighs the seeds of strokes alone (the colour GMM's
        ``stroke_share`` is then left unset).

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.models import Auto
    >>> photo = np.random.default_rng(0).integers(0, 256, (32, 32, 3)).astype(np.uint8)
    >>> Auto().for_image(photo).settings()  # doctest: +NORMALIZE_WHITESPACE
    {'model': 'gmm', 'locality': 4.0, 'texture': 0, 'core': 0.4, 'warm': True,
     'outline': 8.0, 'stroke_reach': 0.2, 'prune': 1.0, 'stroke_share': 0.05}
    >>> nuclei = np.zeros((32, 32), np.uint8); nuclei[4:9, 4:9] = 200  # a dye on black
    >>> type(Auto(seed_share=0.2).for_image(nuclei)).__name__
    'Learned'
    >>> Auto(seed_share=0.2).settings()
    {'model': 'auto', 'seed_share': 0.2}
    """

    name = "auto"
    # placeholders until the image is known (:meth:`for_image` gives the chosen model's)
    lam = GMM.lam
    iterations = None
    seed_share = None
    locality = None
    far_cost = None
    texture = 0
    knobs = ("iterations", "seed_share", "locality", "far_cost")

    def for_image(self, image, channel_axis=-1) -> AppearanceModel:
        """The model this one stands for on ``image`` (a new object, with the knobs given to
        this one and its ``lam`` if one was set).

        Parameters
        ----------
        image : array
            (H, W) or (D, H, W) grey, or with a channel axis; NumPy or CuPy, any real dtype.
            Only a fixed grid of :data:`~graphcut.models._image_kind.SAMPLE_PIXELS` pixels is
            read (the same on every device).
        channel_axis : int or None
            The axis of the channels (as for :func:`graphcut.segment`); None: no channel axis
            (a grey image or volume).

        Returns
        -------
        AppearanceModel
            :data:`COLOUR_MODEL`'s GMM for a colour photograph (3 or 4 channels,
            RGB(A), showing no sign of microscopy) and for a grey photograph (a 2-D image of
            one channel or of equal channels that :func:`grey_statistics` takes for one),
            ``Learned()`` otherwise (volumes too).
        """
        if image.ndim == 2:
            return self._chosen(grey_statistics(image).photograph, grey=True)
        if channel_axis is None:
            return self._chosen(False)  # a grey volume
        axis = channel_axis % image.ndim
        channels = image.shape[axis]
        image = _channels_last(image, axis)
        flat = image.ndim == 3  # an image, not a volume: grey volumes stay with Learned()
        if channels == 1:
            return self._chosen(flat and grey_statistics(image).photograph, grey=True)
        if channels not in (3, 4):
            return self._chosen(False)
        colours = colour_statistics(image[..., :3])
        if colours.grey:
            return self._chosen(flat and grey_statistics(image[..., :3]).photograph, grey=True)
        return self._chosen(not colours.microscopy)

    def for_channels(self, channels: int) -> AppearanceModel:
        """The model this one stands for when only the channel count is known: the colour
        branch for 3 or more channels (the photograph's), ``Learned()`` otherwise. Prefer
        :meth:`for_image`, which also sends colour micrographs to ``Learned()``.

        Parameters
        ----------
        channels : int
            The image's channel count (1 grey, 3 RGB, ...).

        Returns
        -------
        AppearanceModel
        """
        return self._chosen(channels >= 3)

    def _chosen(self, photo: bool, grey: bool = False) -> AppearanceModel:
        given = {key: getattr(self, key) for key in self.knobs
                 if getattr(self, key) is not None}
        knobs = {key: value for key, value in COLOUR_MODEL.items()
                 if not (grey and key in COLOUR_ONLY)
                 # a seed_share given here weighs the seeds of strokes alone too
                 and not (key == "stroke_share" and "seed_share" in given)}
        chosen = GMM(**{**knobs, **given}) if photo else Learned(**given)
        if "lam" in vars(self):
            chosen.lam = self.lam
        return chosen

    def fit(self, features, samples):
        raise RuntimeError(_UNCHOSEN)

    def costs(self, features):
        raise RuntimeError(_UNCHOSEN)


def _channels_last(image, axis: int):
    """``image`` with its channel axis last (a view; NumPy or CuPy)."""
    if axis == image.ndim - 1:
        return image
    return image.transpose([i for i in range(image.ndim) if i != axis] + [axis])


_UNCHOSEN = ("Auto stands for another model: use for_image(image) first "
             "(graphcut.Segmenter does)")
