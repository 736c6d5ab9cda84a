#!/usr/bin/env bash
# Every GPU figure of docs/benchmarks.md on one GPU (about 8 minutes on an H100), in two halves
# that fit a 10-minute command each: "a" (stereo, CSR core), "b" (start-up, clean-up,
# interactive, schedules); no argument runs both.
# Writes one text file per benchmark under $OUT (default ./device-report) and a summary of
# exit codes in $OUT/status.txt. Run from the repository root on the GPU machine:
#
#   bash bench/device_report.sh a && bash bench/device_report.sh b   # ECL-MaxFlow not run
#   ECL_BINARY=/path/to/ecl-maxflow bash bench/device_report.sh
#
# ECL_BINARY: an ECL-MaxFlow executable that whoever runs this built from its published source
# (github.com/burtscher/ECL-MaxFlow); nothing of it is in this repository.
# FRESH_WHEEL: a graphcut wheel for the fresh-install figure (default: built from this checkout,
# which needs setuptools >= 70.1 or the wheel package).
# The 2-GPU batch figure needs a 2-GPU machine: bash bench/device_report.sh batch2
set -u
OUT=${OUT:-device-report}
mkdir -p "$OUT"
source bench/device_env.sh || exit 1
PY=python3
status="$OUT/status.txt"
: > "$status"

step() {  # step NAME SECONDS COMMAND...: run with a time limit, output to $OUT/NAME.txt
    local name=$1 limit=$2
    shift 2
    echo "== $name: $*" | tee -a "$status"
    local started=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
    echo "   exit $? after $((SECONDS - started)) s" | tee -a "$status"
}

if [ "${1:-}" = "batch2" ]; then
    step batch_multigpu 480 $PY bench/bench_batch_multigpu.py --device cuda --workers 0,1,2 \
        --images 64
    exit 0
fi

part=${1:-ab}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
if [[ $part == *a* ]]; then
step stereo_full 100 $PY bench/bench_stereo.py --devices cuda --repeats 3
step stereo_half 45 $PY bench/bench_stereo.py --devices cuda --repeats 3 --downscale 2
ecl=()
if [ -n "${ECL_BINARY:-}" ]; then ecl=(--ecl-binary "$ECL_BINARY"); fi
step csr 300 $PY bench/bench_csr.py --repeats 3 --cpu-repeats 1 ${ecl[@]+"${ecl[@]}"} \
    --instances rlg-long-512x1024,rlg-wide-1024x1024,rlg-wide-2048x2048,genrmf-wide-a64,genrmf-long-a32,genrmf-wide-a128
fi
if [[ $part == *b* ]]; then
wheel=()
if [ -n "${FRESH_WHEEL:-}" ]; then wheel=(--wheel "$FRESH_WHEEL"); fi
step startup 150 $PY bench/bench_startup.py --parts fresh_install,commands,api --repeats 3 \
    --kernels auto ${wheel[@]+"${wheel[@]}"}
step cleanup 60 $PY bench/bench_cleanup.py --sizes 2048x2048,3000x4000 --repeats 5 --strokes 10
step interactive 200 $PY bench/bench_interactive.py --device cuda --sizes 2048x2048,3000x4000 \
    --strokes 10 --parts session,pipeline --gui no
step schedule 120 $PY bench/bench_schedule.py --size 2048x2048 --strokes 10 \
    --schedules 4,16,2 8,16,2 16,16,2 4,8,2
fi
cat "$status"
