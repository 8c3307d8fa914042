#!/usr/bin/env bash
# The whole suite (the README's test command, scripts/test.sh), several times in a row while a
# CPU hog runs: the tests must fail only where the product fails, not because the machine is
# busy (a robot's computer rarely is idle).
#
#   scripts/test_under_load.sh [RUNS] [HOGS]    (defaults: 3 runs, 1 hog process)
#
# Each hog is a busy loop at normal priority. Prints one line per run (the counts scripts/test.sh
# printed, and the time) and exits 1 when any run failed. LEROBOT_ROS_DISTRO is honoured.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
runs="${1:-3}"
hogs="${2:-1}"
hog_pids=()
stop_hogs() {
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null; done
}
trap stop_hogs EXIT
for _ in $(seq "$hogs"); do
  python3 -c 'while True: pass' &
  hog_pids+=($!)
done
echo "[under-load] $hogs CPU hog(s) running (pids ${hog_pids[*]}); $runs run(s) of scripts/test.sh"
status=0
for run in $(seq "$runs"); do
  log="$(mktemp -t lerobot-under-load-XXXXXX.log)"
  start=$SECONDS
  if bash scripts/test.sh > "$log" 2>&1; then verdict=green; else verdict=RED; status=1; fi
  echo "[under-load] run $run/$runs: $verdict in $((SECONDS - start)) s: $(tail -n 1 "$log")" \
    "(log: $log)"
  grep -E '^FAILED|^ERROR' "$log" | head -n 20
done
exit $status
