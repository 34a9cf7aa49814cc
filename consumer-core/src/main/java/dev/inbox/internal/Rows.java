package dev.inbox.internal;

import dev.inbox.InboxRecord;
import dev.inbox.RecordState;
import dev.inbox.StoredResult;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Converts between Java values and columns. Headers are stored as a flat {@code text[]} of name,
 * value, name, value, so that a header with several values keeps each one and its order.
 */
final class Rows {
  private Rows() {}

  static Instant instant(ResultSet rs, String column) throws SQLException {
    OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
    return value == null ? null : value.toInstant();
  }

  /** The state of the current row, or {@link StateMachine#NO_RECORD} where it found none. */
  static RecordState state(ResultSet rs) throws SQLException {
    String state = rs.getString("state");
    return state == null ? StateMachine.NO_RECORD : RecordState.valueOf(state);
  }

  /**
   * Whether the current row's lease runs on ({@link StateMachine#LEASE_LIVE} as {@code
   * lease_live}), or null for a row without a lease.
   */
  static Boolean leaseLive(ResultSet rs) throws SQLException {
    boolean live = rs.getBoolean("lease_live");
    return rs.wasNull() ? null : live;
  }

  static void setResult(Connection connection, PreparedStatement ps, int index, StoredResult result)
      throws SQLException {
    if (result == null) {
      ps.setNull(index, Types.INTEGER);
      ps.setNull(index + 1, Types.ARRAY);
      ps.setNull(index + 2, Types.BINARY);
      ps.setNull(index + 3, Types.BINARY);
      return;
    }
    ps.setInt(index, result.status());
    List<String> flat = new ArrayList<>();
    result
        .headers()
        .forEach(
            (name, values) ->
                values.forEach(
                    v -> {
                      flat.add(name);
                      flat.add(v);
                    }));
    ps.setArray(index + 1, connection.createArrayOf("text", flat.toArray(new String[0])));
    ps.setBytes(index + 2, result.body().orElse(null));
    ps.setBytes(index + 3, result.bodySha256());
  }

  /** The stored result of the current row, or null when none was stored. */
  static StoredResult result(ResultSet rs) throws SQLException {
    int status = rs.getInt("result_status");
    if (rs.wasNull()) {
      return null;
    }
    Map<String, List<String>> headers = new LinkedHashMap<>();
    Array array = rs.getArray("result_headers");
    if (array != null) {
      String[] flat = (String[]) array.getArray();
      for (int i = 0; i + 1 < flat.length; i += 2) {
        headers.computeIfAbsent(flat[i], name -> new ArrayList<>()).add(flat[i + 1]);
      }
    }
    return StoredResult.restore(
        status, headers, rs.getBytes("result_body"), rs.getBytes("result_body_sha256"));
  }

  static InboxRecord record(ResultSet rs) throws SQLException {
    return new InboxRecord(
        rs.getString("scope"),
        rs.getString("key"),
        rs.getBytes("fingerprint"),
        state(rs),
        rs.getInt("attempts"),
        rs.getString("lease_owner"),
        rs.getLong("fencing_token"),
        instant(rs, "locked_until"),
        result(rs),
        rs.getString("last_error"),
        instant(rs, "created_at"),
        instant(rs, "updated_at"),
        instant(rs, "completed_at"));
  }
}
