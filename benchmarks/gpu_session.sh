#!/usr/bin/env bash
# One lent-GPU session (issue 26, item 9), run in the repository root of the device machine:
# the CUDA tests, then a paper-scale (6 x 768 transformer) pretraining to the quality gate, then
# the paper scale's throughput under both batch recipes, then a tiny Figure 3 through the command
# line on CUDA. Every step has its own time limit, so a slow step cannot take the others with it.
# Needs the wheels of the project, python-flint and hmmlearn in .whl/ (the device has no registry):
#   pip wheel --no-deps -w .whl . ; pip download --no-deps --only-binary=:all: --python-version 3.12 ...
# What comes back (at most 8 files, in $OUT): machine.txt, cuda-tests.txt, gate-RECIPE.json, throughput-*.json,
# tiny-summary.json, log.txt.  GATE_RECIPES (default gpu-gate; several run side by side) names the
# pretraining recipes, GATE_MINUTES (default 4.5) caps each, SKIP_EXTRAS=1 skips throughput and tiny;
# gpu-checks.json comes from benchmarks/gpu_checks.py (issue 38: certified checks on the GPU), and
# CHECKS_ONLY=1 stops after it (machine.txt, cuda-tests.txt, gpu-checks.json, log.txt).
set -u
OUT=${OUT:-/tmp/headprompt-gpu}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
start=$(date +%s)
stamp() { echo "== $(( $(date +%s) - start )) s: $*"; }

stamp machine
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch, numpy, flint, headprompt; print('torch', torch.__version__, '| cuda', torch.version.cuda, '|', torch.cuda.get_device_name(), '| numpy', numpy.__version__, '| flint', flint.__version__)"
  nproc; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

stamp cuda tests
timeout 180 python3 -m pytest -m cuda -q -p no:cacheprovider -o addopts="" tests/models/mlm/test_cuda.py \
    > "$OUT/cuda-tests.txt" 2>&1; echo "pytest exit $?" >> "$OUT/cuda-tests.txt"
tail -5 "$OUT/cuda-tests.txt"
stamp certified checks on the GPU; timeout 480 python3 -m benchmarks.gpu_checks --json-only --out "$OUT"; echo "gpu_checks exit $?"; [ -n "${CHECKS_ONLY:-}" ] && { stamp done; exit 0; }

stamp paper-scale pretraining to the gate: ${GATE_RECIPES:-gpu-gate}
# Several recipes run side by side on the one GPU (each process's own throughput figure is then
# shared-GPU, not a benchmark; the throughput step below measures alone).
pids=()
for r in ${GATE_RECIPES:-gpu-gate}; do
    timeout $(python3 -c "print(int(60 * ${GATE_MINUTES:-4.5} + 90))") \
        python3 -m benchmarks.pretrain --scale paper --recipe $r --device cuda --steps 5 \
        --to-gate 30 --minutes "${GATE_MINUTES:-4.5}" --json > "$OUT/gate-$r.json" 2> "/tmp/gate-$r.err" &
    pids+=($!)
done
wait "${pids[@]}"     # not a bare wait: that also waits for the tee above, which never ends
for r in ${GATE_RECIPES:-gpu-gate}; do echo "$r: $(tail -c 300 /tmp/gate-$r.err)"; done

[ -n "${SKIP_EXTRAS:-}" ] && { stamp done; exit 0; }
stamp paper-scale throughput
for r in scale large-batch; do
    timeout 60 python3 -m benchmarks.pretrain --scale paper --recipe $r --device cuda --steps 50 --json \
        > "$OUT/throughput-$r.json"; echo "$r exit $?"
done

stamp tiny Figure 3 on CUDA through the command line
timeout 90 python3 -m headprompt.verify experiment fig3-left --scale tiny --device cuda --seed 5 \
    --out /tmp/tiny --plan /tmp/tiny/plan.json --json > /dev/null; echo "exit $?"
cp /tmp/tiny/summary.json "$OUT/tiny-summary.json" 2>/dev/null
stamp done
