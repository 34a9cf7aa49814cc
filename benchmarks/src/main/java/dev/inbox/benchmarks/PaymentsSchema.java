package dev.inbox.benchmarks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** The business tables of one run: payments (no unique id, so doubles show) and accounts. */
final class PaymentsSchema {
  final String schema;
  private final String insertPayment;
  private final String creditAccount;

  PaymentsSchema(String schema) {
    this.schema = schema;
    this.insertPayment =
        "INSERT INTO " + schema + ".payments (payment_id, account, amount_cents) VALUES (?, ?, ?)";
    this.creditAccount =
        "UPDATE " + schema + ".accounts SET balance_cents = balance_cents + ? WHERE id = ?";
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
    try (PreparedStatement insert = tx.prepareStatement(insertPayment)) {
      insert.setString(1, payment.id());
      insert.setInt(2, payment.account());
      insert.setLong(3, payment.amountCents());
      insert.executeUpdate();
    }
    try (PreparedStatement credit = tx.prepareStatement(creditAccount)) {
      credit.setLong(1, payment.amountCents());
      credit.setInt(2, payment.account());
      credit.executeUpdate();
    }
  }

  /** True when every distinct payment took effect once and the balances add up. */
  boolean correct(DataSource dataSource, Workload workload) throws SQLException {
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
          && rs.getLong(3) == workload.expectedSumCents;
    }
  }
}
