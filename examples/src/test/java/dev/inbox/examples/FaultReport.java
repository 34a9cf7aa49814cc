package dev.inbox.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/** What a fault run was meant to do, what the database holds afterwards, and the verdict. */
final class FaultReport {
  record Expected(
      PaymentPlan kafka,
      PaymentPlan rabbit,
      PaymentPlan http,
      Set<String> httpAlsoOverKafka,
      Set<String> kafkaPoison,
      Set<String> rabbitPoison,
      int faultsScheduled,
      int faultsPlanned) {}

  record Observed(
      Set<String> kafkaDeadLetters,
      Set<String> rabbitDeadLetters,
      Map<String, Set<String>> httpAnswers,
      long httpRequests,
      List<String> faultsInjected,
      List<String> selfExits) {}

  /** One line of the table. */
  record Check(String name, long expected, long actual) {
    boolean passed() {
      return expected == actual;
    }
  }

  final List<Check> checks = new ArrayList<>();
  final List<String> faultsInjected;
  final long httpRequests;
  int httpKeysAlsoOverKafka;
  int httpKeysAppliedByKafka;

  /** Children that exited on their own and were restarted; not a failure, but worth reading. */
  final List<String> selfExits;

  private FaultReport(Observed observed) {
    this.faultsInjected = observed.faultsInjected();
    this.httpRequests = observed.httpRequests();
    this.selfExits = observed.selfExits();
  }

  static FaultReport collect(DataSource dataSource, Expected expected, Observed observed)
      throws SQLException {
    FaultReport report = new FaultReport(observed);
    Map<String, Map<String, Long>> rowsByChannel = paymentRows(dataSource);
    // An HTTP key also sent over Kafka counts as the HTTP channel's, whichever channel applied it.
    Map<String, Long> kafkaRows = rowsByChannel.computeIfAbsent("kafka", c -> new HashMap<>());
    Map<String, Long> httpRows = rowsByChannel.computeIfAbsent("http", c -> new HashMap<>());
    for (String key : expected.httpAlsoOverKafka()) {
      Long rows = kafkaRows.remove(key);
      if (rows != null) {
        httpRows.merge(key, rows, Long::sum);
        report.httpKeysAppliedByKafka++;
      }
    }
    report.httpKeysAlsoOverKafka = expected.httpAlsoOverKafka().size();
    report.channel("kafka", expected.kafka(), rowsByChannel);
    report.channel("rabbit", expected.rabbit(), rowsByChannel);
    report.channel("http", expected.http(), rowsByChannel);
    report.add(
        "sum of account balances (cents)",
        expected.kafka().sumCents() + expected.rabbit().sumCents() + expected.http().sumCents(),
        single(dataSource, "SELECT coalesce(sum(balance_cents), 0) FROM accounts"));
    report.add(
        "keys IN_PROGRESS with a live lease",
        0,
        single(
            dataSource,
            "SELECT count(*) FROM inbox WHERE state = 'IN_PROGRESS' AND locked_until > now()"));
    report.deadLetters("kafka", expected.kafkaPoison(), observed.kafkaDeadLetters());
    report.deadLetters("rabbit", expected.rabbitPoison(), observed.rabbitDeadLetters());
    report.add(
        "http keys answered to the clients",
        expected.http().distinct().size(),
        observed.httpAnswers().size());
    report.add(
        "http keys whose clients got differing bodies",
        0,
        observed.httpAnswers().values().stream().filter(bodies -> bodies.size() > 1).count());
    report.add("faults injected", expected.faultsScheduled(), observed.faultsInjected().size());
    return report;
  }

  private void channel(String channel, PaymentPlan plan, Map<String, Map<String, Long>> rows) {
    Map<String, Long> applied = rows.getOrDefault(channel, Map.of());
    Set<String> lost = new HashSet<>(plan.distinct().keySet());
    lost.removeAll(applied.keySet());
    add(channel + " effects (distinct keys sent)", plan.distinct().size(), applied.size());
    add(channel + " keys lost", 0, lost.size());
    add(
        channel + " keys applied twice or more",
        0,
        applied.values().stream().filter(n -> n > 1).count());
    Set<String> unknown = new HashSet<>(applied.keySet());
    unknown.removeAll(plan.distinct().keySet());
    add(channel + " effects of keys never sent", 0, unknown.size());
  }

  /** Every poison message dead-lettered, and nothing else. */
  private void deadLetters(String channel, Set<String> poison, Set<String> deadLettered) {
    long poisonDeadLettered = intersection(poison, deadLettered);
    add(channel + " poison dead-lettered (distinct keys)", poison.size(), poisonDeadLettered);
    add(
        channel + " dead letters that were not poison",
        0,
        deadLettered.size() - poisonDeadLettered);
  }

  private void add(String name, long expected, long actual) {
    checks.add(new Check(name, expected, actual));
  }

  boolean passed() {
    return checks.stream().allMatch(Check::passed);
  }

  String table() {
    StringBuilder out = new StringBuilder();
    out.append(String.format("%-46s %12s %12s  %s%n", "check", "expected", "actual", "ok"));
    for (Check check : checks) {
      out.append(
          String.format(
              "%-46s %12d %12d  %s%n",
              check.name(), check.expected(), check.actual(), check.passed() ? "ok" : "FAILED"));
    }
    return out.toString();
  }

  private static long intersection(Set<String> a, Set<String> b) {
    return a.stream().filter(b::contains).count();
  }

  /** payment_id → rows, per channel. */
  private static Map<String, Map<String, Long>> paymentRows(DataSource dataSource)
      throws SQLException {
    Map<String, Map<String, Long>> rows = new HashMap<>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT channel, payment_id, count(*) FROM payments GROUP BY channel, payment_id");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        rows.computeIfAbsent(rs.getString(1), k -> new HashMap<>())
            .put(rs.getString(2), rs.getLong(3));
      }
    }
    return rows;
  }

  private static long single(DataSource dataSource, String sql) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
