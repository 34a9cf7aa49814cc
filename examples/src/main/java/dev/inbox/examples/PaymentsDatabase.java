package dev.inbox.examples;

import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/** The example's payments schema, and the one write every channel makes for a new payment. */
public final class PaymentsDatabase {
  private PaymentsDatabase() {}

  /** Creates the accounts and payments tables and the inbox table. */
  public static void migrate(DataSource dataSource, InboxSettings inboxSettings) {
    Flyway.configure(PaymentsDatabase.class.getClassLoader())
        .dataSource(dataSource)
        .locations("classpath:dev/inbox/examples/db")
        .table("payments_schema_history")
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .load()
        .migrate();
    InboxSchema.migrate(dataSource, inboxSettings);
  }

  /**
   * Records the payment and credits its account, through the inbox's transaction.
   *
   * @return the account's new balance
   */
  public static long apply(Connection tx, Payment payment, String channel) throws SQLException {
    try (PreparedStatement insert =
        tx.prepareStatement(
            "INSERT INTO payments (payment_id, account_id, amount_cents, channel, created_at)"
                + " VALUES (?, ?, ?, ?, ?)")) {
      insert.setString(1, payment.paymentId());
      insert.setString(2, payment.account());
      insert.setLong(3, payment.amountCents());
      insert.setString(4, channel);
      insert.setObject(5, OffsetDateTime.ofInstant(Instant.now(), ZoneOffset.UTC));
      insert.executeUpdate();
    }
    try (PreparedStatement credit =
        tx.prepareStatement(
            "INSERT INTO accounts (account_id, balance_cents) VALUES (?, ?)"
                + " ON CONFLICT (account_id) DO UPDATE"
                + " SET balance_cents = accounts.balance_cents + EXCLUDED.balance_cents"
                + " RETURNING balance_cents")) {
      credit.setString(1, payment.account());
      credit.setLong(2, payment.amountCents());
      try (ResultSet rs = credit.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Records many payments and credits their accounts in two set-based statements, through the
   * inbox's transaction: what a consumer's set-based handler does with a whole batch. Accounts are
   * credited in account order, so that two batches lock them in the same order.
   */
  public static void applyAll(Connection tx, List<Payment> payments, String channel)
      throws SQLException {
    Object[] ids = payments.stream().map(Payment::paymentId).toArray();
    Object[] accounts = payments.stream().map(Payment::account).toArray();
    Object[] amounts = payments.stream().map(Payment::amountCents).toArray();
    try (PreparedStatement insert =
        tx.prepareStatement(
            "INSERT INTO payments (payment_id, account_id, amount_cents, channel, created_at)"
                + " SELECT p.id, p.account, p.amount, ?, ?"
                + " FROM unnest(?::text[], ?::text[], ?::bigint[]) AS p(id, account, amount)")) {
      insert.setString(1, channel);
      insert.setObject(2, OffsetDateTime.ofInstant(Instant.now(), ZoneOffset.UTC));
      insert.setArray(3, tx.createArrayOf("text", ids));
      insert.setArray(4, tx.createArrayOf("text", accounts));
      insert.setArray(5, tx.createArrayOf("bigint", amounts));
      insert.executeUpdate();
    }
    try (PreparedStatement credit =
        tx.prepareStatement(
            "INSERT INTO accounts (account_id, balance_cents)"
                + " SELECT p.account, sum(p.amount)"
                + " FROM unnest(?::text[], ?::bigint[]) AS p(account, amount)"
                + " GROUP BY p.account ORDER BY p.account"
                + " ON CONFLICT (account_id) DO UPDATE"
                + " SET balance_cents = accounts.balance_cents + EXCLUDED.balance_cents")) {
      credit.setArray(1, tx.createArrayOf("text", accounts));
      credit.setArray(2, tx.createArrayOf("bigint", amounts));
      credit.executeUpdate();
    }
  }

  /** The balance of an account, or null when it has none. */
  public static Long balance(DataSource dataSource, String account) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT balance_cents FROM accounts WHERE account_id = ?")) {
      ps.setString(1, account);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  /** Counts for the demo's final check. */
  public record Totals(
      long paymentRows,
      long distinctPaymentIds,
      long doubledPaymentIds,
      long balanceSum,
      long paymentSum) {}

  public static Totals totals(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT (SELECT count(*) FROM payments),"
                    + " (SELECT count(DISTINCT payment_id) FROM payments),"
                    + " (SELECT count(*) FROM (SELECT payment_id FROM payments GROUP BY payment_id"
                    + "   HAVING count(*) > 1) d),"
                    + " (SELECT coalesce(sum(balance_cents), 0) FROM accounts),"
                    + " (SELECT coalesce(sum(amount_cents), 0) FROM payments)")) {
      rs.next();
      return new Totals(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5));
    }
  }

  /** Payment rows per channel. */
  public static long rows(DataSource dataSource, String channel) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM payments WHERE channel = ?")) {
      ps.setString(1, channel);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
