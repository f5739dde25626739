#!/usr/bin/env bash
# The render farm on this host's GPU against SwiftShader, in one run (docs/benchmarks.md, "On a
# GPU"): which ANGLE backend reaches the GPU and whether it draws what SwiftShader draws
# (gpu-probe.ts), then interleaved function-level runs (bench:render, software then GPU, per page
# count), then the HTTP warm-render scenario both ways. Everything is printed and written to DIR.
#   scripts/bench/gpu-compare.sh DIR [workers...]      (default workers: 2 and the core count)
# JOBS (3000) sets the function-level jobs a run; SECONDS_PER_RUN (5) and WARM_PER_SECOND (1500,
# raise it where renders outrun it: each player is drawn once) the HTTP runs. CHROMIUM_PATH as usual.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: gpu-compare.sh DIR [workers...]}
shift
mkdir -p "$out"
workers=("$@")
[ ${#workers[@]} -gt 0 ] || workers=(2 "$(nproc)")
node=${NODE:-node}

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 1 > "$out/gpu-load.csv" 2>&1 &
  sampler=$!
  trap 'kill $sampler 2>/dev/null' EXIT
fi

echo "== which backend draws on the GPU"
$node scripts/bench/gpu-probe.ts --flags --out "$out/probe" 2>&1 | tee "$out/probe.txt"
backend=$(grep -oE '^(gl-egl|gles-egl|vulkan): GPU:' "$out/probe.txt" | head -1 | cut -d: -f1)
if [ -z "$backend" ]; then
  echo "no backend drew on the GPU: software only"
fi

echo "== function level (bench:render), interleaved"
for w in "${workers[@]}"; do
  for round in 1 2; do
    for gpu in off ${backend:+on}; do
      echo "-- workers $w, round $round, gpu $gpu"
      $node scripts/bench/render.ts --jobs "${JOBS:-3000}" --skins distinct --kinds render,body --no-avatars --size 180 --inflight 64 \
        --workers "$w" --gpu "$gpu" --gpu-backend "${backend:-gl-egl}" 2>&1 | grep -E '^[0-9]{4}-|^\| (render|body)' | tee -a "$out/farm.txt"
    done
  done
done

echo "== HTTP, warm-render"
for gpu in off ${backend:+on}; do
  echo "-- gpu $gpu"
  RENDER_GPU=$gpu RENDER_GPU_BACKEND=${backend:-gl-egl} RENDER_WORKERS=${workers[-1]} \
    $node scripts/loadtest.ts warm-render --seconds "${SECONDS_PER_RUN:-5}" --runs 3 --threads 4 --connections 64 --warm-per-second "${WARM_PER_SECOND:-1500}" 2>&1 | tee -a "$out/http.txt"
done
