#!/usr/bin/env bash
# Does the suite pass on a loaded machine? Clones the committed HEAD into two temporary folders
# (`npm ci` in each), runs `npm test` in a loop in one and RUNS times in a row in the other, and
# prints each run's start, duration and result, with the files that failed. Both folders and the
# loop are removed at the end. A failure here is a test that races the clock.
#   bash scripts/test-beside.sh [RUNS]      (default 3)
set -u
runs=${1:-3}
repo=$(git rev-parse --show-toplevel)
branch=$(git -C "$repo" rev-parse --abbrev-ref HEAD)
work=$(mktemp -d "${TMPDIR:-/tmp}/warden-beside-XXXXXX")
loop=
cleanup() {
  rm -f "$work/looping"
  # The loop runs in its own session: its id names the whole group (npm, vitest, their children).
  if [ -n "$loop" ]; then kill -- "-$loop" 2>/dev/null; wait "$loop" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

for side in load test; do
  git clone -q --branch "$branch" "$repo" "$work/$side" || exit 1
  if ! (cd "$work/$side" && npm ci --no-audit --no-fund >"$work/$side-ci.log" 2>&1); then
    echo "npm ci failed in the $side clone:" >&2
    tail -n 20 "$work/$side-ci.log" >&2
    exit 1
  fi
done

touch "$work/looping"
setsid bash -c 'cd "$1/load" && n=0 && while [ -e "$1/looping" ]; do n=$((n + 1)); npm test >"$1/load-$n.log" 2>&1; echo "load run $n: exit $?" >>"$1/load.txt"; done' _ "$work" &
loop=$!

failed=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  (cd "$work/test" && npm test >"$work/test-$i.log" 2>&1)
  code=$?
  took=$(($(date +%s) - start))
  # vitest colours its summary even into a file: the codes go before the lines are matched.
  summary=$(sed 's/\x1b\[[0-9;]*m//g' "$work/test-$i.log" | grep -E '^ +(Test Files|Tests) ' | tail -n 2 | sed 's/^ *//' | paste -sd ';' -)
  echo "run $i/$runs: started $(date -u -d "@$start" +%FT%TZ), ${took}s, $([ $code -eq 0 ] && echo pass || echo "FAIL (exit $code)"); ${summary:-no summary}"
  if [ $code -ne 0 ]; then
    failed=1
    sed 's/\x1b\[[0-9;]*m//g' "$work/test-$i.log" | grep -E '^ *(FAIL|×) ' | sort -u | head -n 20
  fi
done
touch "$work/load.txt"
echo "beside it: $(wc -l <"$work/load.txt") finished load runs, $(grep -c -v 'exit 0' "$work/load.txt") of them failed"
# The runs beside count too: name what failed there before the folders go.
grep -v 'exit 0' "$work/load.txt" | sed -n 's/^load run \([0-9]*\):.*/\1/p' | while read -r n; do
  echo "load run $n failed:"
  sed 's/\x1b\[[0-9;]*m//g' "$work/load-$n.log" | grep -E '^ *(FAIL|×) |Unhandled|Error:' | sort -u | head -n 20
done
exit $failed
