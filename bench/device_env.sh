#!/usr/bin/env bash
# Source this at the start of a command on a GPU machine that has no network:
#   source bench/device_env.sh
# It installs the wheels carried in .whl/ (PyMaxflow, thinhpf, ...; see README "Benchmarks")
# into /tmp/site and this repository in editable mode, without touching the network.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || return 1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . || return 1
export PYTHONUNBUFFERED=1
python3 -c "import cupy, graphcut.solver; print('device:', cupy.cuda.runtime.getDeviceProperties(0)['name'].decode())"
