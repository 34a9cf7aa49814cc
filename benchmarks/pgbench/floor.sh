#!/usr/bin/env bash
# The least that recording a batch's keys can cost: floor-nodedup.sql against the same statement recording
# the keys as well (floor-inbox-row, floor-keys-only, floor-hash-only), each on emptied tables, one client,
# in rounds so that drift falls on all of them. Needs one core scenario run first (for bench_core.inbox).
# Usage: bash benchmarks/pgbench/floor.sh [rounds] [seconds]
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-3}
seconds=${2:-8}
psql=(psql -h 127.0.0.1 -U postgres -d postgres -q -v ON_ERROR_STOP=1)
"${psql[@]}" -f floor-setup.sql
for round in $(seq "$rounds"); do
  for variant in nodedup inbox-row keys-only hash-only; do
    "${psql[@]}" -c "TRUNCATE floortest.payments, floortest.inbox, floortest.keys_only, floortest.hash_only"
    "${psql[@]}" -c "CHECKPOINT"
    latency=$(pgbench -h 127.0.0.1 -U postgres -n -c 1 -T "$seconds" -M prepared -f "floor-$variant.sql" postgres 2>&1 \
      | sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p')
    echo "round $round $variant $latency ms"
  done
done
