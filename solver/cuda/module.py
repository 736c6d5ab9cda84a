"""Kept for existing callers: ``load_module(filename)`` and ``kernel(filename, name)`` are the
package's one kernel loader (:mod:`._loader`: shipped fatbin, else NVRTC)."""

from __future__ import annotations

from ._loader import kernel, load_module, module_origin

__all__ = ["kernel", "load_module", "module_origin"]
