#!/usr/bin/env bash
# Plays a newcomer on a fresh machine: clones this repository (HEAD, or the ref given as $1) into a temp dir and
# runs the README's two commands there, as written, with
#   - an empty Maven repository (MAVEN_OPTS=-Dmaven.repo.local=<empty dir>), so every dependency and plugin
#     must come from Maven Central;
#   - no redis-server, redis-cli or redis-sentinel on the PATH (the PATH is rebuilt without them), so the
#     tests must use the Redis binary bundled in embedded-redis, as the demo does;
#   - PostgreSQL and Chromium hidden from the tests (SLUICE_TESTKIT_HIDE, see testkit's HostBinaries), so the
#     tests that need them must skip and say why.
# It fails if either command fails, if the demo's report is not accounted for, if the test log has warnings a
# newcomer would wonder about (the shade plugin's overlapping classes), and it prints every skipped test with
# its reason. Takes about 25 minutes on 2 cores (downloads, the demo, the whole test suite).
#
#   scripts/fresh-machine-check.sh [git-ref]      # work dir and logs: $FRESH_DIR (default /tmp/sluice-fresh)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
ref="${1:-HEAD}"
work="${FRESH_DIR:-/tmp/sluice-fresh}"
rm -rf "$work"
mkdir -p "$work/m2" "$work/bin"
git clone -q "$repo" "$work/clone"
git -C "$work/clone" checkout -q "$(git -C "$repo" rev-parse "$ref")"

# The README's commands, read from the fenced blocks after "Build and run the demo:" and "Run the tests".
block_after() { awk -v marker="$1" 'index($0, marker) == 1 {found=1; next} found && /^```bash/ {inb=1; next} inb && /^```/ {exit} inb {print}' "$work/clone/README.md"; }
demo_cmd="$(block_after 'Build and run the demo:')"
test_cmd="$(block_after 'Run the tests')"
[ -n "$demo_cmd" ] && [ -n "$test_cmd" ] || { echo "cannot find the README's demo or test command"; exit 2; }

# A PATH without Redis: every directory of the PATH that holds a redis binary is replaced by a directory of
# links to everything else in it.
hidden_re='^redis-(server|cli|sentinel|check-aof|check-rdb|benchmark)$'
new_path=""
IFS=: read -ra dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  has_redis=0
  for f in "$d"/redis-*; do [[ "$(basename "$f")" =~ $hidden_re ]] && has_redis=1; done
  if [ "$has_redis" = 1 ]; then
    shim="$work/bin/$(echo "$d" | tr '/' '_')"
    mkdir -p "$shim"
    for f in "$d"/*; do
      name="$(basename "$f")"
      [[ "$name" =~ $hidden_re ]] || ln -s "$f" "$shim/$name" 2>/dev/null || true
    done
    d="$shim"
  fi
  new_path="${new_path:+$new_path:}$d"
done
export PATH="$new_path"
if command -v redis-server >/dev/null 2>&1; then echo "redis-server is still on the PATH"; exit 2; fi
export MAVEN_OPTS="${MAVEN_OPTS:-} -Dmaven.repo.local=$work/m2"
export SLUICE_TESTKIT_HIDE="postgres,initdb,chromium"
unset REDIS_URL

cd "$work/clone"
echo "[fresh] $(git log -1 --format='%h %s')"
echo "[fresh] demo: $demo_cmd   (log: $work/demo.log)"
start=$(date +%s)
bash -c "$demo_cmd" > "$work/demo.log" 2>&1 || { echo "[fresh] the demo command failed"; tail -40 "$work/demo.log"; exit 1; }
grep -E '^\s+unaccounted\s+0\s' "$work/demo.log" >/dev/null || { echo "[fresh] the demo report does not show 'unaccounted 0'"; tail -40 "$work/demo.log"; exit 1; }
echo "[fresh] demo passed in $(( $(date +%s) - start )) s"

echo "[fresh] tests: $test_cmd   (log: $work/test.log)"
start=$(date +%s)
bash -c "$test_cmd" > "$work/test.log" 2>&1 || { echo "[fresh] the test command failed"; grep -E 'FAIL|ERROR' "$work/test.log" | head -40; exit 1; }
echo "[fresh] tests passed in $(( $(date +%s) - start )) s"
grep -E '^\[WARNING\] +\[SKIPPED\]' "$work/test.log" | sed 's/^\[WARNING\] */[fresh] /' || echo "[fresh] no test skipped"
if grep -q 'overlapping' "$work/test.log"; then
  echo "[fresh] the test log has shade warnings about overlapping classes:"; grep -m5 overlapping "$work/test.log"; exit 1
fi
echo "[fresh] warnings in the test log besides skipped tests: $(grep '^\[WARNING\]' "$work/test.log" | grep -vc -e 'SKIPPED' -e 'Tests run:.*Skipped' || true)"
echo "[fresh] OK"
