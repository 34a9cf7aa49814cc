package dev.inbox.testing;

import java.io.InputStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.function.Supplier;

/**
 * A statement parameter that fails half-way through its send, as a document read from a store that
 * breaks or runs out of memory: 1 000 000 bytes announced, a failure after 100 000. pgjdbc pads the
 * rest only after an IOException; any other failure leaves its Bind message half-sent, and the
 * connection then never answers again.
 */
public final class HalfSentParameter {
  private static final int ANNOUNCED = 1_000_000;
  private static final int SENT = 100_000;

  private HalfSentParameter() {}

  /** Runs a statement with the parameter on the transaction; throws what {@code failure} gives. */
  public static void send(Connection transaction, Supplier<? extends Throwable> failure)
      throws SQLException {
    try (PreparedStatement ps = transaction.prepareStatement("SELECT octet_length(?)")) {
      ps.setBinaryStream(1, failingAfterSent(failure), ANNOUNCED);
      ps.executeQuery();
    }
  }

  /** {@link #send} with an OutOfMemoryError, the Error a large document most likely meets. */
  public static void sendRunningOutOfMemory(Connection transaction) throws SQLException {
    send(
        transaction, () -> new OutOfMemoryError("Java heap space (simulated, reading a document)"));
  }

  private static InputStream failingAfterSent(Supplier<? extends Throwable> failure) {
    return new InputStream() {
      private int given;

      @Override
      public int read() {
        if (given++ >= SENT) {
          Throwable t = failure.get();
          if (t instanceof Error error) {
            throw error;
          }
          throw (RuntimeException) t;
        }
        return 'x';
      }
    };
  }
}
