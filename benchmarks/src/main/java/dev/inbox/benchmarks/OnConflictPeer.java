package dev.inbox.benchmarks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The usual hand-written pattern: one transaction per message that inserts the id as {@code
 * IN_PROGRESS} with {@code ON CONFLICT DO NOTHING}, runs the business write only if the row was
 * inserted, and marks it {@code COMPLETED}.
 */
final class OnConflictPeer implements Peer {
  private final DataSource dataSource;
  private final PaymentsSchema payments;
  private final String insert;
  private final String complete;

  OnConflictPeer(DataSource dataSource, PaymentsSchema payments) throws SQLException {
    this.dataSource = dataSource;
    this.payments = payments;
    String table = payments.schema + ".processed";
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + table + " (id text PRIMARY KEY, status text NOT NULL)");
    }
    this.insert =
        "INSERT INTO " + table + " (id, status) VALUES (?, 'IN_PROGRESS') ON CONFLICT DO NOTHING";
    this.complete = "UPDATE " + table + " SET status = 'COMPLETED' WHERE id = ?";
  }

  @Override
  public void consume(Workload.Payment payment) throws SQLException {
    try (Connection tx = dataSource.getConnection()) {
      tx.setAutoCommit(false);
      try {
        int inserted;
        try (PreparedStatement claim = tx.prepareStatement(insert)) {
          claim.setString(1, payment.id());
          inserted = claim.executeUpdate();
        }
        if (inserted == 1) {
          payments.apply(tx, payment);
          try (PreparedStatement done = tx.prepareStatement(complete)) {
            done.setString(1, payment.id());
            done.executeUpdate();
          }
        } else if (inserted != 0) {
          throw new IllegalStateException(
              inserted + " rows inserted for id " + payment.id() + " indicates a bug");
        }
        tx.commit();
      } catch (SQLException | RuntimeException e) {
        tx.rollback();
        throw e;
      }
    }
  }
}
