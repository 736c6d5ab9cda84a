"""``graphcut gui``: the desktop app (needs the ``gui`` extra, PyQt6).

On Linux, Qt's X11 platform plugin (``libqxcb.so``) needs system libraries that a minimal
system may lack (``libxcb-cursor0``, ``libxcb-icccm4``, ``libxcb-keysyms1``, ...); Qt then
stops with a platform-plugin error that does not name them. Before any Qt is loaded,
:func:`missing_qt_libraries` asks the dynamic linker (``ldd`` on the plugin, or
``ctypes.util.find_library`` when the plugin or ``ldd`` cannot be found) and the command
names what is missing and the packages that provide it.
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click

from .common import device_option, max_pixels_option, resolve_device_or_usage_error

# Libraries Qt 6's xcb platform plugin loads: (library name for find_library, soname,
# Debian / Ubuntu package).
XCB_LIBRARIES = (
    ("xcb-cursor", "libxcb-cursor.so.0", "libxcb-cursor0"),
    ("xcb-icccm", "libxcb-icccm.so.4", "libxcb-icccm4"),
    ("xcb-keysyms", "libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("xcb-image", "libxcb-image.so.0", "libxcb-image0"),
    ("xcb-render-util", "libxcb-render-util.so.0", "libxcb-render-util0"),
    ("xcb-randr", "libxcb-randr.so.0", "libxcb-randr0"),
    ("xcb-shape", "libxcb-shape.so.0", "libxcb-shape0"),
    ("xcb-xfixes", "libxcb-xfixes.so.0", "libxcb-xfixes0"),
    ("xcb-xkb", "libxcb-xkb.so.1", "libxcb-xkb1"),
    ("xkbcommon-x11", "libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("X11-xcb", "libX11-xcb.so.1", "libx11-xcb1"),
)
_PACKAGES = {soname: package for _, soname, package in XCB_LIBRARIES}


def uses_xcb(environ=os.environ, platform: str = sys.platform) -> bool:
    """Whether Qt will use its X11 (xcb) platform plugin: on Linux, unless
    ``QT_QPA_PLATFORM`` names another one (offscreen, wayland, ...)."""
    chosen = environ.get("QT_QPA_PLATFORM", "").strip()
    if not chosen and environ.get("WAYLAND_DISPLAY") \
            and environ.get("XDG_SESSION_TYPE") == "wayland":
        return False  # Qt 6 picks its Wayland plugin there
    return platform.startswith("linux") and (not chosen or chosen.startswith("xcb"))


def xcb_plugin() -> Path | None:
    """PyQt6's ``libqxcb.so``, or None when it cannot be found."""
    spec = importlib.util.find_spec("PyQt6")
    if spec is None or spec.origin is None:
        return None
    plugin = Path(spec.origin).parent / "Qt6" / "plugins" / "platforms" / "libqxcb.so"
    return plugin if plugin.is_file() else None


def _ldd_missing(plugin: Path) -> list[str] | None:
    """The sonames ``ldd`` reports as not found for ``plugin``; None when ``ldd`` fails."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    try:
        output = subprocess.run([ldd, os.fspath(plugin)], capture_output=True, text=True,
                                timeout=20, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    missing = []
    for line in output.splitlines():
        name, _, where = line.strip().partition("=>")
        if where.strip() == "not found" and name.strip() not in missing:
            missing.append(name.strip())
    return missing


def missing_qt_libraries(find_library=None, plugin=None, ldd=None) -> list[str]:
    """The system libraries Qt's xcb plugin needs and cannot find (sonames, e.g.
    ``"libxcb-cursor.so.0"``); empty when all are there.

    Parameters
    ----------
    find_library : callable, optional
        ``ctypes.util.find_library`` (the default) or a stand-in: name -> path or None. Used
        when the plugin or ``ldd`` is not available.
    plugin : Path, optional
        The plugin to ask ``ldd`` about (default: :func:`xcb_plugin`).
    ldd : callable, optional
        plugin -> list of missing sonames, or None when it cannot tell (default: runs
        ``ldd``).

    Examples
    --------
    >>> missing_qt_libraries(lambda name: None, ldd=lambda plugin: None)[:2]
    ['libxcb-cursor.so.0', 'libxcb-icccm.so.4']
    """
    find_library = ctypes.util.find_library if find_library is None else find_library
    ldd = _ldd_missing if ldd is None else ldd
    plugin = xcb_plugin() if plugin is None else plugin
    found = ldd(plugin) if plugin is not None else None
    if found is not None:
        return found
    return [soname for name, soname, _ in XCB_LIBRARIES if find_library(name) is None]


def missing_libraries_message(missing: list[str]) -> str:
    """What to tell the user about ``missing`` sonames: what they are and how to install
    them."""
    packages = sorted({_PACKAGES.get(soname, soname) for soname in missing})
    return ("the desktop app's window system plugin (Qt's xcb) cannot load because these "
            f"system libraries are missing: {', '.join(missing)}. On Debian or Ubuntu "
            f"install them with:\n  sudo apt-get install {' '.join(packages)}\n(other "
            "systems: the packages providing these files; or set QT_QPA_PLATFORM=wayland "
            "on a Wayland desktop)")


@click.command()
@click.argument("image", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--seeds", type=click.Path(exists=True, dir_okay=False),
              help="Seed file to load with IMAGE (label PNG 0/1/2 or red/blue stroke PNG).")
@click.option("--lam", type=click.FloatRange(min=0.0), default=None,
              help="Smoothness weight, kept for every model until Segment > Reset λ "
              "(default: the appearance model's own, which λ then follows).")
@click.option("--model", type=click.Choice(["auto", "histogram", "gmm", "learned"]),
              default=None,
              help="Appearance model to start with (Segment > Appearance model changes it; "
              "default: auto, or the one --seeds' settings file names).")
@device_option
@max_pixels_option
def gui(image, seeds, lam, model, device, max_pixels):
    """Open the desktop app, optionally with IMAGE (and its --seeds).

    Paint foreground with the left button and background with the right button; the object
    is segmented again after every stroke. Help > Controls lists every key.
    """
    if seeds is not None and image is None:
        raise click.UsageError("--seeds needs an IMAGE to go with")
    resolve_device_or_usage_error(device)
    if importlib.util.find_spec("PyQt6") is not None and uses_xcb():
        missing = missing_qt_libraries()
        if missing:
            raise click.ClickException(missing_libraries_message(missing))
    try:
        from graphcut.gui import run
    except ImportError as error:
        raise click.ClickException(
            f"the desktop app needs PyQt6, which cannot be loaded ({error}); install it with: "
            "pip install 'graphcut[gui]'") from None
    sys.exit(run(image, seeds=seeds, device=device, lam=lam, model=model,
                 max_pixels=max_pixels))
