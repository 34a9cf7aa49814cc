package dev.inbox.internal;

import dev.inbox.InboxSettings;

/**
 * The statements of {@link dev.inbox.Storage#PARTITIONED} that differ from the plain table's: only
 * the conflict targets and the generation a row is written to. The guards stay {@link Statements}'
 * own. A partitioned table's primary key is {@code (scope, key, generation)}, so an upsert names
 * that key and writes each row to the generation of the key's existing row where its snapshot sees
 * one, else to the write generation; the key guard (migration V1's trigger) keeps a key from being
 * inserted into a second generation.
 */
final class PartitionedStatements {
  /** The conflict target of an upsert: the partitioned table's primary key. */
  static final String CONFLICT_TARGET = "(scope, key, generation)";

  private final String table;
  private final String writeGeneration;

  PartitionedStatements(InboxSettings settings) {
    this.table = settings.qualifiedTable();
    this.writeGeneration =
        '"' + settings.schema() + "\".\"" + settings.table() + "_write_generation\"()";
  }

  /** The generation to write the key's row to: its existing row's, else the write generation. */
  private String generationOf(String scope, String key) {
    return "COALESCE((SELECT e.generation FROM "
        + table
        + " AS e WHERE e.scope = "
        + scope
        + " AND e.key = "
        + key
        + " LIMIT 1), "
        + writeGeneration
        + ")";
  }

  /**
   * The claim upsert's rows and conflict target, with the plain statement's parameters in the same
   * order: the scope, the new row's values, the keys and the fingerprints. The scope comes first in
   * a CTE so that each row's generation can look its key up.
   */
  String claimRows(String newRowValues) {
    return "WITH s(scope) AS (SELECT ?::text) INSERT INTO "
        + table
        + " AS r (scope, key, fingerprint, state, attempts, lease_owner, fencing_token,"
        + " locked_until, created_at, updated_at, completed_at, generation)"
        + " SELECT s.scope, u.k, u.f, "
        + newRowValues
        + ", "
        + generationOf("s.scope", "u.k")
        + " FROM s CROSS JOIN unnest(?::text[], ?::bytea[]) AS u(k, f) ORDER BY u.k"
        + " ON CONFLICT "
        + CONFLICT_TARGET;
  }

  /**
   * The failure count's row and conflict target, with the plain statement's parameters: scope, key,
   * fingerprint, attempts and error.
   */
  String recordFailureRow(String failedState) {
    return "INSERT INTO "
        + table
        + " AS r (scope, key, fingerprint, state, attempts, last_error, created_at, updated_at,"
        + " generation) SELECT n.*, "
        + generationOf("n.scope", "n.key")
        + " FROM (VALUES (?::text, ?::text, ?::bytea, "
        + failedState
        + ", ?::integer, ?::text, now(), now())) AS n(scope, key, fingerprint, state, attempts,"
        + " last_error, created_at, updated_at) ON CONFLICT "
        + CONFLICT_TARGET;
  }

  /** The size of every partition with its indexes: a partitioned table itself has no storage. */
  String tableBytes() {
    return " (SELECT COALESCE(sum(pg_total_relation_size(i.inhrelid)), 0)::bigint"
        + " FROM pg_catalog.pg_inherits i WHERE i.inhparent = '"
        + table.replace("'", "''")
        + "'::regclass)";
  }
}
