#!/usr/bin/env bash
# Source after bench/device_env.sh, on a GPU machine without network, before
#   python bench/bench_napari_latency.py --mode api ...
# It installs napari without Qt from the wheels carried in .whl-napari/ (see
# bench/napari_latency_requirements.txt) and makes the system libraries napari's vispy loads at
# import (fontconfig, OpenGL: loaded, never used, no window is opened) findable when the
# machine lacks them: copy them from a Linux x86-64 machine that has them into .devlibs/
# (libfontconfig.so.1, libGL.so.1, libGLESv2.so.2, libEGL.so.1 and what `ldd` lists for them)
# and carry that folder with the run.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl-napari/*.whl || return 1
if [ -d .devlibs ]; then
    mkdir -p /tmp/devlibs /tmp/devlibs-shim
    cp .devlibs/* /tmp/devlibs/
    export LD_LIBRARY_PATH=/tmp/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    # ctypes.util.find_library ignores LD_LIBRARY_PATH without a compiler; fall back to the copies
    cat > /tmp/devlibs-shim/sitecustomize.py <<'PY'
import ctypes.util as _util
import glob as _glob

_find = _util.find_library


def _find_with_copies(name):
    found = _find(name)
    if found is None:
        copies = sorted(_glob.glob(f"/tmp/devlibs/lib{name}.so*"))
        found = copies[0] if copies else None
    return found


_util.find_library = _find_with_copies
PY
    export PYTHONPATH=/tmp/devlibs-shim:$PYTHONPATH
fi
python3 -c "import napari.components, napari; print('napari', napari.__version__, 'imports')"
