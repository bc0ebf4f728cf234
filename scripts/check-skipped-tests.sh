#!/usr/bin/env bash
# Lists every test the last `mvn verify` skipped, with its reason (from target/skipped-tests/skipped.txt of each
# module, written by the root pom's "print-skipped-tests" execution), and fails if one was skipped for a reason
# other than those allowed here. .ci/run calls it after the README's test command: CI installs everything this
# machine can run, so a skip there means a missing install step, not a missing machine feature.
#
# Allowed: no Docker engine (Testcontainers' disabledWithoutDocker): no Docker engine runs on this kind of machine.
set -euo pipefail
cd "$(dirname "$0")/.."

allowed='Docker'
mapfile -t skipped < <(cat */target/skipped-tests/skipped.txt 2>/dev/null | sed '/^$/d')
if [ "${#skipped[@]}" -eq 0 ]; then
  echo "[skipped-tests] none"
  exit 0
fi
bad=0
for line in "${skipped[@]}"; do
  if [[ "$line" =~ $allowed ]]; then
    echo "[skipped-tests] allowed: $line"
  else
    echo "[skipped-tests] NOT ALLOWED: $line"
    bad=1
  fi
done
exit "$bad"
