package dev.inbox.benchmarks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;

/** The business tables of one run: payments (no unique id, so doubles show) and accounts. */
final class PaymentsSchema {
  final String schema;
  private final String insertPayment;
  private final String creditAccount;
  private final String applyAll;

  PaymentsSchema(String schema) {
    this.schema = schema;
    this.insertPayment =
        "INSERT INTO " + schema + ".payments (payment_id, account, amount_cents) VALUES (?, ?, ?)";
    this.creditAccount =
        "UPDATE " + schema + ".accounts SET balance_cents = balance_cents + ? WHERE id = ?";
    this.applyAll =
        "WITH p AS (SELECT * FROM unnest(?::text[], ?::int[], ?::bigint[]) AS u(id, account,"
            + " amount)), inserted AS (INSERT INTO "
            + schema
            + ".payments (payment_id, account, amount_cents) SELECT id, account, amount FROM p)"
            + " UPDATE "
            + schema
            + ".accounts a SET balance_cents = a.balance_cents + d.total FROM (SELECT account,"
            + " sum(amount)::bigint AS total FROM p GROUP BY account) d WHERE a.id = d.account";
  }

  /** Drops and creates the schema, with every account at zero. */
  void reset(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      s.execute("CREATE SCHEMA " + schema);
      s.execute(
          "CREATE TABLE "
              + schema
              + ".payments (payment_id text NOT NULL, account int NOT NULL,"
              + " amount_cents bigint NOT NULL)");
      s.execute(
          "CREATE TABLE "
              + schema
              + ".accounts (id int PRIMARY KEY, balance_cents bigint NOT NULL DEFAULT 0)");
      s.execute(
          "INSERT INTO "
              + schema
              + ".accounts (id) SELECT g FROM generate_series(0, "
              + (Workload.ACCOUNTS - 1)
              + ") g");
    }
  }

  /** The effect of one new payment, in the caller's transaction. */
  void apply(Connection tx, Workload.Payment payment) throws SQLException {
    record(tx, payment);
    try (PreparedStatement credit = tx.prepareStatement(creditAccount)) {
      credit.setLong(1, payment.amountCents());
      credit.setInt(2, payment.account());
      credit.executeUpdate();
    }
  }

  /**
   * The payment's row only, no account credited: a write that concurrent transactions never wait
   * for, whatever payments they hold.
   */
  void record(Connection tx, Workload.Payment payment) throws SQLException {
    try (PreparedStatement insert = tx.prepareStatement(insertPayment)) {
      insert.setString(1, payment.id());
      insert.setInt(2, payment.account());
      insert.setLong(3, payment.amountCents());
      insert.executeUpdate();
    }
  }

  /**
   * The effects of many new payments in one set-based statement: every payment row inserted, and
   * each account credited once with the sum of its payments.
   */
  void applyAll(Connection tx, List<Workload.Payment> newPayments) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(applyAll)) {
      ps.setArray(
          1, tx.createArrayOf("text", newPayments.stream().map(Workload.Payment::id).toArray()));
      ps.setArray(
          2,
          tx.createArrayOf(
              "integer", newPayments.stream().map(Workload.Payment::account).toArray()));
      ps.setArray(
          3,
          tx.createArrayOf(
              "bigint", newPayments.stream().map(Workload.Payment::amountCents).toArray()));
      ps.executeUpdate();
    }
  }

  /** True when every distinct payment took effect once and the balances add up. */
  boolean correct(DataSource dataSource, Workload workload) throws SQLException {
    return correct(dataSource, workload, true);
  }

  /**
   * @param credited whether the accounts were credited ({@link #apply}), or left at zero ({@link
   *     #record})
   */
  boolean correct(DataSource dataSource, Workload workload, boolean credited) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT (SELECT count(*) FROM "
                    + schema
                    + ".payments), (SELECT count(DISTINCT payment_id) FROM "
                    + schema
                    + ".payments), (SELECT sum(balance_cents) FROM "
                    + schema
                    + ".accounts)")) {
      rs.next();
      return rs.getLong(1) == workload.distinct
          && rs.getLong(2) == workload.distinct
          && rs.getLong(3) == (credited ? workload.expectedSumCents : 0);
    }
  }
}
