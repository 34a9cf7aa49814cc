#!/usr/bin/env bash
# What the database alone charges a record @KafkaListener for the inbox: spring-kafka-plain.sql against
# spring-kafka-claim.sql (the starter's claim) and spring-kafka-insert-only.sql (the least a claim can
# be), one client, on emptied tables, in rounds so that drift falls on all of them; each with the
# server's synchronous_commit (COMMIT waits for the WAL flush) and with it off (round trips and work
# only). Needs one spring-kafka benchmark run first (for bench_spring_kafka.inbox).
# Usage: bash benchmarks/pgbench/spring-kafka-floor.sh [rounds] [seconds]
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-3}
seconds=${2:-8}
psql=(psql -h 127.0.0.1 -U postgres -d test -q -v ON_ERROR_STOP=1)
"${psql[@]}" -f spring-kafka-setup.sql
for round in $(seq "$rounds"); do
  for commit in on off; do
    for variant in plain claim insert-only; do
      "${psql[@]}" -c "TRUNCATE skfloor.payments, skfloor.inbox"
      "${psql[@]}" -c "CHECKPOINT"
      latency=$(PGOPTIONS="-c synchronous_commit=$commit" pgbench -h 127.0.0.1 -U postgres -n -c 1 \
        -T "$seconds" -M prepared -f "spring-kafka-$variant.sql" test 2>&1 \
        | sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p')
      echo "round $round synchronous_commit=$commit $variant $latency ms"
    done
  done
done
