"""``GMMModel``: GrabCut's Gaussian mixture colour model, fitted by EM on the CPU or the GPU.

A mixture of ``components`` (default 5) full-covariance Gaussians over the C channels of the
image (C = 3 for RGB, 1 for grey; intensities scaled to [0, 1]):

    p(x) = sum_k pi_k N(x; mu_k, Sigma_k),      cost(x) = -log p(x)  (nats)

Fitting (:meth:`GMMModel.fit`): the sample is split into ``components`` clusters by
Orchard and Bouman's principal-axis splitting (the cluster whose covariance has the largest
eigenvalue is cut in two through its mean, across that eigenvector; the initialisation of
Rother et al.'s GrabCut), each cluster gives one Gaussian, then ``em_steps`` steps of
expectation-maximisation refine them. :meth:`GMMModel.refit` is one EM step from the current
parameters on a new sample, which is GrabCut's "assign components, re-learn the GMM" step in
its soft form: an EM step never lowers the sample's likelihood, so the iterated energy keeps
falling.

Every pixel-sized computation is whole-array NumPy / CuPy code on the image's device, in
float64: the per-pixel features ``[x, x_i x_j (i <= j)]`` turn both the E-step (log densities
of all components, ``(N, K)``) and the M-step (weighted sums) into matrix products. Only the
K x C x C parameters travel to the host, where NumPy inverts the covariances, so the CPU and
GPU paths compute the same numbers (to rounding).

A covariance floor (``COVARIANCE_FLOOR`` added to the diagonal, in squared [0, 1] units:
a standard deviation of 0.01, 2.6 grey levels of 255) keeps flat regions and
single-colour samples from giving infinite densities.
"""

from __future__ import annotations

import math

import numpy as np

from graphcut._arrays import array_module, to_host

from ._base import ColourModel, PerLabelModel, check_fraction, check_sample
from ._gmm_costs_cpu import mixture_costs
from ._gmm_kernels import fused_mixture_costs
from ._principal_axes import principal_axis_split

DEFAULT_COMPONENTS = 5
DEFAULT_EM_STEPS = 2
COVARIANCE_FLOOR = 1e-4
# A component whose responsibilities add up to less than this many pixels is dropped.
MIN_COMPONENT_WEIGHT = 1e-3
#: rows of the CPU's evaluation at a time (:func:`_log_densities_in_chunks`)
CHUNK_ROWS = 1 << 15
#: ``GMM(outline=...)``'s cost falls to 0 at this share of the largest distance from a box's
#: outline, or at OUTLINE_PIXELS pixels from it when nearer (None: no limit in pixels)
OUTLINE_REACH, OUTLINE_PIXELS = 0.35, None


class GMMModel(ColourModel):
    """Gaussian mixture colour model (GrabCut's), see the module docstring.

    Parameters
    ----------
    components
        number of Gaussians (fewer when the sample has fewer distinct colours
        than that: a cluster that cannot be split, or a component that loses all its
        pixels, is dropped).
    em_steps
        EM steps after the initial split in :meth:`fit`.
    covariance_floor
        added to every covariance's diagonal, in squared [0, 1] units.
    min_rows
        sample rows per Gaussian at least: a first fit on ``n`` rows splits the sample
        into at most ``max(1, n // min_rows)`` components (a mixture of five from a
        stroke's few dozen pixels fits their noise, not the object's colours); 0: no limit.

    Attributes
    ----------
    weights
        (K,) mixing weights pi_k, summing to 1 (after fitting; NumPy, on the host).
    means
        (K, C) means (after fitting).
    covariances
        (K, C, C) covariances, floor included (after fitting).

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.models import GMMModel
    >>> rng = np.random.default_rng(0)
    >>> dark, bright = rng.normal(0.2, 0.02, (4, 4, 1)), rng.normal(0.8, 0.02, (4, 4, 1))
    >>> values = np.concatenate([dark, bright], axis=1)          # (H, W, C) in [0, 1]
    >>> model = GMMModel(components=1).fit(values, values[..., 0] < 0.5)
    >>> model.means.round(2)
    array([[0.19]])
    >>> costs = model.costs(values)                              # nats, (H, W)
    >>> bool(costs[0, 0] < costs[0, 7])                          # dark pixels cost less
    True
    """

    name = "gmm"

    def __init__(self, components: int = DEFAULT_COMPONENTS, *, em_steps: int = DEFAULT_EM_STEPS,
                 covariance_floor: float = COVARIANCE_FLOOR, min_rows: int = 0):
        if isinstance(components, bool) or int(components) != components or components < 1:
            raise ValueError(f"components must be a positive integer, got {components!r}")
        if isinstance(em_steps, bool) or int(em_steps) != em_steps or em_steps < 0:
            raise ValueError(f"em_steps must be an integer >= 0, got {em_steps!r}")
        if not (math.isfinite(covariance_floor) and covariance_floor > 0):
            raise ValueError(f"covariance_floor must be a finite number > 0, got "
                             f"{covariance_floor!r}")
        if isinstance(min_rows, bool) or int(min_rows) != min_rows or min_rows < 0:
            raise ValueError(f"min_rows must be an integer >= 0, got {min_rows!r}")
        self.components = int(components)
        self.min_rows = int(min_rows)
        self.em_steps = int(em_steps)
        self.covariance_floor = float(covariance_floor)
        self.weights = self.means = self.covariances = None
        self._features = None   # (values, features (N, F)) of the last image seen
        # (values, -log p (N,), responsibilities (N, K)) under the current parameters
        self._evaluated = None

    def __repr__(self) -> str:
        k = "unfitted" if self.weights is None else f"{len(self.weights)} fitted"
        return (f"GMMModel(components={self.components}, em_steps={self.em_steps}, "
                f"covariance_floor={self.covariance_floor:g}; {k})")

    @property
    def fitted(self) -> bool:
        return self.weights is not None

    def components_for(self, rows: int) -> int:
        """The components of a first fit on a sample of ``rows`` rows (``min_rows``)."""
        if not self.min_rows:
            return self.components
        return max(1, min(self.components, int(rows) // self.min_rows))

    # -- public --------------------------------------------------------------------------

    def fit(self, values, mask) -> "GMMModel":
        check_sample(values, mask, "GMMModel")
        features = self._features_of(values)
        channels = values.shape[-1]
        xp = array_module(values)
        weight = mask.reshape(-1).astype(xp.float64)
        chosen = weight > 0
        sample, sample_weight = features[chosen], weight[chosen]
        if sample.shape[0] == 0:
            raise ValueError("GMMModel: the sample is empty (no pixel selected)")
        clusters, count = principal_axis_split(sample[:, :channels], sample_weight,
                                               self.components_for(sample.shape[0]))
        responsibilities = xp.zeros((sample.shape[0], count), xp.float64)
        responsibilities[xp.arange(sample.shape[0]), clusters] = sample_weight
        self._set_parameters(*_moments(sample, responsibilities), channels)
        for _ in range(self.em_steps):
            self._em_step(values, features, weight)
        return self

    def refit(self, values, mask) -> "GMMModel":
        """One EM step from the current parameters, on the pixels ``values[mask]``."""
        if not self.fitted:
            raise RuntimeError("GMMModel.refit() called before fit()")
        check_sample(values, mask, "GMMModel")
        xp = array_module(values)
        weight = mask.reshape(-1).astype(xp.float64)
        if not bool((weight > 0).any()):
            raise ValueError("GMMModel: the sample is empty (no pixel selected)")
        self._em_step(values, self._features_of(values), weight)
        return self

    def forget_costs(self) -> None:
        """Drop the cached costs and responsibilities of the last image evaluated (the next
        :meth:`costs` or EM step computes them again: the same numbers)."""
        self._evaluated = None

    def costs(self, values):
        if not self.fitted:
            raise RuntimeError("GMMModel.costs() called before fit()")
        cached = self._evaluated is not None and self._evaluated[0] is values
        learned = self._features is not None and self._features[0] is values
        if cached:
            costs = self._evaluated[1]
        elif not learned and array_module(values) is np:
            # an image the model did not learn from (a live stroke's full-size costs): no
            # EM step will want its responsibilities, so the costs alone (the same numbers)
            features = self._features_of(values)
            costs = mixture_costs(features, *self._linear_form(values.shape[-1]), CHUNK_ROWS)
            self._evaluated = (values, costs, None, None)
        elif not learned and (costs := fused_mixture_costs(
                values, *self._linear_form(values.shape[-1]))) is not None:
            # the same on the GPU: one kernel from the channels, no feature matrix
            self._evaluated = (values, costs, None, None)
        else:
            costs, _ = self._evaluate(values)
        return costs.reshape(values.shape[:-1])

    # -- internals -----------------------------------------------------------------------

    def _features_of(self, values):
        """``[x_c ..., x_i x_j for i <= j]`` per pixel, (H*W, C + C(C+1)/2), cached (and
        shared with the other labels' models through ``shared_features``, a list of the
        last three ``(values, features)``, when :class:`GMM` gave one)."""
        if self._features is None or self._features[0] is not values:
            shared = getattr(self, "shared_features", None)
            found = next((kept for kept in shared or () if kept[0] is values), None)
            if found is None:
                xp = array_module(values)
                x = values.reshape(-1, values.shape[-1])
                i, j = (xp.asarray(v) for v in np.triu_indices(values.shape[-1]))
                found = (values, xp.concatenate([x, x[:, i] * x[:, j]], axis=1))
                if shared is not None:  # the image's and the coarse grid's (kept 3)
                    shared[:] = [*shared[-2:], found]
            self._features = found
            self._evaluated = None
        return self._features[1]

    def _evaluate(self, values):
        """``-log p(x)`` (H*W,) and the responsibilities (H*W, K) of every pixel under the
        current parameters (one pass: both come from the same exponentials), cached; the
        responsibilities are divided out only when an EM step asks for them
        (:class:`_Responsibilities`: the costs alone do not need them)."""
        if (self._evaluated is None or self._evaluated[0] is not values
                or self._evaluated[2] is None):  # None: the costs alone were computed
            features = self._features_of(values)
            xp = array_module(values)
            linear, constant = self._linear_form(values.shape[-1])
            if xp is np:  # in chunks of rows that stay in cache through the passes
                self._evaluated = (values, *_log_densities_in_chunks(features, linear,
                                                                    constant))
            else:
                log_parts = features @ xp.asarray(linear) + xp.asarray(constant)
                top = _across_components(np.maximum, log_parts)
                parts = xp.exp(log_parts - top[:, None])
                total = _across_components(np.add, parts)
                self._evaluated = (values, -(top + xp.log(total)), parts, total)
        _, costs, parts, total = self._evaluated
        return costs, _Responsibilities(parts, total)

    def _linear_form(self, channels):
        """Coefficients making ``log pi_k N_k(x)`` linear in the features: (F, K), (K,).

        -0.5 (x - mu)^T P (x - mu) = -0.5 x^T P x + (P mu)^T x - 0.5 mu^T P mu, P = Sigma^-1,
        and x^T P x = sum_i P_ii x_i^2 + 2 sum_{i<j} P_ij x_i x_j.
        """
        precision = np.linalg.inv(self.covariances)                    # (K, C, C)
        _, logdet = np.linalg.slogdet(self.covariances)
        i, j = np.triu_indices(channels)
        quadratic = -0.5 * precision[:, i, j] * np.where(i == j, 1.0, 2.0)  # (K, P)
        linear = np.einsum("kab,kb->ka", precision, self.means)         # (K, C)
        constant = (np.log(self.weights) - 0.5 * logdet - 0.5 * channels * math.log(2 * math.pi)
                    - 0.5 * np.einsum("ka,ka->k", linear, self.means))
        return np.ascontiguousarray(np.concatenate([linear, quadratic], axis=1).T), constant

    def _em_step(self, values, features, weight):
        """E-step (responsibilities under the current parameters) then M-step, each pixel
        counted ``weight`` times (float (H*W,), 0 = not in the sample)."""
        _, responsibilities = self._evaluate(values)
        responsibilities = responsibilities.array()  # a new (N, K) array: weighted in place
        responsibilities *= weight[:, None]
        self._set_parameters(*_moments(features, responsibilities), values.shape[-1])

    def _set_parameters(self, counts, first, second, channels):
        """Weights, means and covariances from the responsibility-weighted moments (host)."""
        keep = counts > MIN_COMPONENT_WEIGHT
        counts, first, second = counts[keep], first[keep], second[keep]
        means = first / counts[:, None]
        i, j = np.triu_indices(channels)
        raw = np.zeros((len(counts), channels, channels))
        raw[:, i, j] = second / counts[:, None]
        raw[:, j, i] = second / counts[:, None]
        covariances = raw - means[:, :, None] * means[:, None, :]
        covariances += self.covariance_floor * np.eye(channels)
        self.weights = counts / counts.sum()
        self.means = means
        self.covariances = covariances
        self._evaluated = None


class _Responsibilities:
    """Every pixel's responsibilities ``parts / total`` (N, K), computed when asked."""

    def __init__(self, parts, total):
        self.parts, self.total = parts, total

    def array(self):
        return self.parts / self.total[:, None]


def _log_densities_in_chunks(features, linear, constant):
    """NumPy: ``(-log p (N,), parts (N, K), total (N,))`` of ``features`` (N, F) under the
    linear form ``(linear (F, K), constant (K,))``, :data:`CHUNK_ROWS` rows at a time (each
    chunk's K-column temporaries stay in cache: several times less memory traffic than
    whole-image passes; the matrix product of a chunk may round its last bit otherwise than
    the whole image's)."""
    n, count = features.shape[0], linear.shape[1]
    costs, parts, total = np.empty(n), np.empty((n, count)), np.empty(n)
    for start in range(0, n, CHUNK_ROWS):
        rows = slice(start, start + CHUNK_ROWS)
        log_parts = features[rows] @ linear
        log_parts += constant
        top = _across_components(np.maximum, log_parts)
        log_parts -= top[:, None]
        chunk_parts = np.exp(log_parts, out=parts[rows])
        chunk_total = total[rows]
        chunk_total[:] = _across_components(np.add, chunk_parts)
        costs[rows] = -(top + np.log(chunk_total))
    return costs, parts, total


def _across_components(ufunc, array):
    """``array.max(axis=1)`` (``ufunc`` ``np.maximum``) or ``array.sum(axis=1)``
    (``np.add``) of an (N, K) array. NumPy reduces a short last axis
    pixel by pixel (the inner loop K long): on the CPU the K columns are combined instead,
    in the same order, which gives the same numbers (K < 8: NumPy's sum adds a row's K terms
    one after the other) several times faster."""
    if array_module(array) is not np or array.shape[1] >= 8:
        return array.max(axis=1) if ufunc is np.maximum else array.sum(axis=1)
    out = array[:, 0].copy()
    for k in range(1, array.shape[1]):
        ufunc(out, array[:, k], out=out)
    return out


def _moments(features, responsibilities):
    """Per component: total responsibility (K,), weighted sums of x (K, C) and of x_i x_j
    (K, P), as host NumPy arrays. ``features`` (N, C + P), ``responsibilities`` (N, K)."""
    counts = responsibilities.sum(axis=0)
    sums = responsibilities.T @ features
    counts, sums = to_host(counts), to_host(sums)
    channels = _channels(features.shape[1])
    return counts, sums[:, :channels], sums[:, channels:]


def _channels(num_features: int) -> int:
    """C from C + C(C+1)/2 features."""
    for channels in range(1, 9):
        if channels + channels * (channels + 1) // 2 == num_features:
            return channels
    raise ValueError(f"{num_features} features do not come from an image's channels")


class GMM(PerLabelModel):
    """GrabCut's appearance model: each label's Gaussian mixture (:class:`GMMModel`),
    re-estimated over GrabCut's iterations, with seeds that weigh and act locally and the
    local contrast as one more channel.

    Parameters
    ----------
    components : int, optional
        Gaussians per label; ``None``: 5.
    **knobs
        ``iterations`` (int): GrabCut's re-estimations at most; ``None``: 5.
        ``seed_share``, ``locality``, ``far_cost`` (float): ``None``: 0.1, 2 nats, 5 nats
        (:class:`~graphcut.models.AppearanceModel`). ``texture`` (int): radius of the
        local-contrast channel; 0: colours only; ``None``: 4. ``core`` (float, 0..1): with a
        box or lasso, the object's first sample is the region's core, its pixels at least
        ``core`` times the largest distance from the outline (plus the object seeds), instead
        of the whole region; the iterations then learn from the mask; ``None``: 0 (the whole
        region, GrabCut's start). ``warm`` (bool): with a box or lasso, GrabCut's iterations
        run for the box alone and are kept; a stroke then re-estimates the kept mixtures once
        (one EM step on the box's mask corrected by the seeds) and cuts once, so strokes are
        live (:mod:`graphcut.segmentation._warm`); ``None``: False (iterate on every update).
        ``outline`` (float, nats >= 0): with a box or lasso (and ``core`` > 0), the object
        costs this much more at the region's outline, falling linearly to 0 at
        :data:`OUTLINE_REACH` of the largest distance from it (or :data:`OUTLINE_PIXELS`
        pixels when nearer): the box's margin is background; ``None``: 0 (off).
        ``stroke_reach`` (float >= 0, a share of ``sqrt(H * W)``): strokes alone with
        ``warm=True``: the unmarked pixels farther than this from every object seed start
        as background in the coarse grid's first fit (GrabCut's start: the background's
        first mixture learns the far image, not one stroke's colours;
        :func:`graphcut.segmentation._coarse.far_background`); ``None``: 0 (off: the
        first fit reads the seeds alone). ``component_rows`` (int >= 0): each label's first
        fit has at most one Gaussian per this many sample rows (``GMMModel(min_rows=...)``:
        a stroke's few dozen pixels get one or two Gaussians, not five fitted to their
        noise); ``None``: 0 (off). ``prune`` (float, nats >= 0): with ``warm=True`` and a
        box or lasso alone, after GrabCut's iterations the object's Gaussians of weight at
        least :data:`~graphcut.segmentation._prune.PRUNE_WEIGHT` whose pixels in the mask the
        background explains nearly as well (median margin below ``prune`` nats) are dropped,
        and the image is re-estimated and cut once (:mod:`graphcut.segmentation._prune`: a
        background region the box's core swallowed); ``None``: 0 (off).
        ``stroke_share`` (float, 0..1): strokes alone (no box or lasso) with ``warm=True``,
        the seeds' share of the samples instead of ``seed_share`` (each label's seeds weigh
        this share of the image's pixels together; a smaller share lets the coarse
        iterations learn more from the mask than from the strokes' few pixels:
        :func:`graphcut.segmentation._warm.coarse_then_refit`); ``None``: ``seed_share``.

    Examples
    --------
    >>> from graphcut.models import GMM
    >>> GMM(components=3, texture=0).settings()
    {'model': 'gmm', 'components': 3, 'texture': 0}
    """

    name = "gmm"
    lam = 35.0
    components = None
    iterations = 5
    seed_share = 0.1
    locality = 2.0
    far_cost = 5.0
    texture = 4
    core = 0.0
    warm = False
    outline = 0.0
    stroke_reach = 0.0
    component_rows = 0
    prune = 0.0
    stroke_share = None
    knobs = ("components", "iterations", "seed_share", "locality", "far_cost", "texture",
             "core", "warm", "outline", "stroke_reach", "component_rows", "prune",
             "stroke_share")

    def __init__(self, components=None, **knobs):
        super().__init__(components=components, **knobs)

    def check_knob(self, key, value):
        if key == "components":
            return GMMModel(value).components  # its range check and message
        if key in ("core", "stroke_share"):
            return check_fraction(key, value)
        if key == "warm":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"warm must be true or false, got {value!r}")
            return bool(value)
        return super().check_knob(key, value)

    @property
    def outline_reach(self) -> float:
        """:data:`OUTLINE_REACH` (read when used, so that a patched constant counts)."""
        return OUTLINE_REACH

    @property
    def outline_pixels(self):
        """:data:`OUTLINE_PIXELS`."""
        return OUTLINE_PIXELS

    def label_model(self) -> GMMModel:
        model = GMMModel(DEFAULT_COMPONENTS if self.components is None else self.components,
                         min_rows=self.component_rows)
        if self.warm:  # a live model: the labels share the per-pixel products, kept between
            if "_products" not in vars(self):  # strokes (the coarse grid's and the image's)
                self._products = []
            model.shared_features = self._products
        return model
