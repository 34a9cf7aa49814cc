package dev.inbox.benchmarks.spring;

import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The business tables of one run, in a schema of their own that also holds the inbox table:
 * payments (no unique id, so that a doubled effect shows as a second row) and accounts.
 */
final class PaymentsTables {
  final String schema;

  PaymentsTables(String schema) {
    if (!schema.matches("[a-z_][a-z0-9_]*")) {
      throw new IllegalArgumentException(
          "schema must be a lower-case SQL identifier, but was '" + schema + "'");
    }
    this.schema = schema;
  }

  String insertPayment() {
    return "INSERT INTO "
        + schema
        + ".payments (payment_id, account, amount_cents) VALUES (?, ?, ?)";
  }

  String creditAccount() {
    return "UPDATE " + schema + ".accounts SET balance_cents = balance_cents + ? WHERE id = ?";
  }

  /**
   * Drops the schema (the inbox table and its migration history with it) and creates the tables.
   */
  void reset(JdbcTemplate jdbc) {
    jdbc.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    jdbc.execute("CREATE SCHEMA " + schema);
    jdbc.execute(
        "CREATE TABLE "
            + schema
            + ".payments (payment_id text NOT NULL, account int NOT NULL,"
            + " amount_cents bigint NOT NULL)");
    jdbc.execute(
        "CREATE TABLE "
            + schema
            + ".accounts (id int PRIMARY KEY, balance_cents bigint NOT NULL DEFAULT 0)");
    jdbc.execute(
        "INSERT INTO "
            + schema
            + ".accounts (id) SELECT g FROM generate_series(0, "
            + (Workload.ACCOUNTS - 1)
            + ") g");
  }

  /**
   * True when every distinct payment has exactly one row and every account holds exactly the sum of
   * its distinct payments.
   */
  boolean correct(JdbcTemplate jdbc, Workload workload) {
    Long rows = jdbc.queryForObject("SELECT count(*) FROM " + schema + ".payments", Long.class);
    Long ids =
        jdbc.queryForObject(
            "SELECT count(DISTINCT payment_id) FROM " + schema + ".payments", Long.class);
    if (rows == null || rows != workload.distinct || ids == null || ids != workload.distinct) {
      return false;
    }
    List<Long> balances =
        jdbc.queryForList(
            "SELECT balance_cents FROM " + schema + ".accounts ORDER BY id", Long.class);
    if (balances.size() != Workload.ACCOUNTS) {
      return false;
    }
    for (int account = 0; account < Workload.ACCOUNTS; account++) {
      if (balances.get(account) != workload.expectedBalances[account]) {
        return false;
      }
    }
    return true;
  }
}
