package dev.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The SQL guard of the claim and the Java classification must decide a mismatch alike, or a key
 * would be taken over by a statement that Java then calls a mismatch (or the other way round).
 * Every pair of awkward fingerprints is checked on PostgreSQL, as bound parameters (which the
 * planner may fold as constants) and as table columns.
 */
class FingerprintSqlTest {
  private static final byte[] DIGEST = Fingerprints.sha256("payload");

  private static byte[] bytes(Object... parts) {
    List<Byte> out = new ArrayList<>();
    for (Object part : parts) {
      byte[] b =
          part instanceof String text
              ? text.getBytes(StandardCharsets.ISO_8859_1)
              : part instanceof Integer i ? new byte[] {(byte) (int) i} : (byte[]) part;
      for (byte x : b) {
        out.add(x);
      }
    }
    byte[] result = new byte[out.size()];
    for (int i = 0; i < result.length; i++) {
      result[i] = out.get(i);
    }
    return result;
  }

  private static List<byte[]> awkwardFingerprints() {
    List<byte[]> all = new ArrayList<>();
    all.add(null);
    all.add(new byte[0]);
    all.add(bytes("INBX"));
    all.add(bytes("INBX", 0));
    all.add(bytes("INBX", 1));
    all.add(bytes("INBX", 1, "a"));
    all.add(bytes("INBX", 1, "a", DIGEST));
    all.add(bytes("INBX", 1, "b", DIGEST));
    all.add(bytes("INBX", 32, "k".repeat(32), DIGEST));
    all.add(bytes("INBX", 32, "k".repeat(32), Fingerprints.sha256("other")));
    all.add(bytes("INBX", 33, "k".repeat(33), DIGEST));
    all.add(bytes("INBX", 0x80, DIGEST));
    all.add(bytes("INBX", 1, 0x80, DIGEST));
    all.add(bytes("INBX", 1, 0x81, DIGEST));
    all.add(bytes("INBX", 7, "messa"));
    all.add(bytes("inbx", 1, "a", DIGEST));
    all.add(Fingerprints.ofMessage("x".getBytes(StandardCharsets.UTF_8)));
    all.add(Fingerprints.ofMessage("y".getBytes(StandardCharsets.UTF_8)));
    all.add(Fingerprints.tagged("http", DIGEST));
    all.add(Fingerprints.sha256("x"));
    all.add(Fingerprints.sha256("y"));
    all.add(DIGEST);
    return all;
  }

  private static String describe(byte[] f) {
    return f == null ? "null" : HexFormat.of().formatHex(f);
  }

  @Test
  void sql_and_java_agree_on_every_pair_of_awkward_fingerprints() throws Exception {
    List<byte[]> all = awkwardFingerprints();
    String sql =
        "SELECT "
            + Statements.fingerprintMismatch("r.f", "p.f")
            + " FROM (SELECT ?::bytea AS f) r, (SELECT ?::bytea AS f) p";
    try (Connection c = TestDatabase.shared().connect();
        PreparedStatement pair = c.prepareStatement(sql)) {
      for (byte[] recorded : all) {
        for (byte[] presented : all) {
          pair.setBytes(1, recorded);
          pair.setBytes(2, presented);
          try (ResultSet rs = pair.executeQuery()) {
            rs.next();
            assertThat(rs.getBoolean(1))
                .as("mismatch(%s, %s)", describe(recorded), describe(presented))
                .isEqualTo(Fingerprints.mismatch(recorded, presented));
            assertThat(rs.wasNull()).isFalse();
          }
        }
      }
    }
  }

  @Test
  void sql_and_java_agree_on_fingerprints_read_from_a_table() throws Exception {
    List<byte[]> all = awkwardFingerprints();
    try (Connection c = TestDatabase.shared().connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE TEMPORARY TABLE fps (i integer, f bytea)");
      try (PreparedStatement insert = c.prepareStatement("INSERT INTO fps VALUES (?, ?)")) {
        for (int i = 0; i < all.size(); i++) {
          insert.setInt(1, i);
          insert.setBytes(2, all.get(i));
          insert.addBatch();
        }
        insert.executeBatch();
      }
      int pairs = 0;
      try (ResultSet rs =
          s.executeQuery(
              "SELECT r.i, p.i, "
                  + Statements.fingerprintMismatch("r.f", "p.f")
                  + ", "
                  + Statements.fingerprintKind("r.f")
                  + " FROM fps r, fps p")) {
        while (rs.next()) {
          byte[] recorded = all.get(rs.getInt(1));
          byte[] presented = all.get(rs.getInt(2));
          assertThat(rs.getBoolean(3))
              .as("mismatch(%s, %s)", describe(recorded), describe(presented))
              .isEqualTo(Fingerprints.mismatch(recorded, presented));
          String kind = Fingerprints.kind(recorded);
          byte[] expectedTag =
              kind.isEmpty() ? new byte[0] : Arrays.copyOf(recorded, 5 + kind.length());
          assertThat(rs.getBytes(4)).as("kind of %s", describe(recorded)).isEqualTo(expectedTag);
          pairs++;
        }
      }
      assertThat(pairs).isEqualTo(all.size() * all.size());
    }
  }
}
