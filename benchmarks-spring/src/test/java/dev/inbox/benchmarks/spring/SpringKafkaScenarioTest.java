package dev.inbox.benchmarks.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.testing.TestDatabase;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The scenario end to end on a small workload, against a real KRaft broker and PostgreSQL: both
 * variants booted, timed and checked, and the effects of the last run (the inbox's) counted here
 * once more, apart from the scenario's own check.
 */
class SpringKafkaScenarioTest {
  private static final String SCHEMA = "bench_spring_kafka_test";

  @ParameterizedTest
  @EnumSource(SpringKafkaScenario.Listener.class)
  void one_pair_of_runs_applies_each_distinct_payment_exactly_once_in_both_variants(
      SpringKafkaScenario.Listener listener) throws Exception {
    TestDatabase db = TestDatabase.shared();
    BenchmarkKafka kafka = BenchmarkKafka.open(null);
    SpringKafkaScenario.Options options =
        new SpringKafkaScenario.Options(
            db.jdbcUrl(),
            db.user(),
            db.password(),
            kafka.bootstrapServers(),
            SCHEMA,
            300,
            0.2,
            1,
            0,
            7,
            listener);
    ResultLine line = SpringKafkaScenario.run(options, kafka);

    assertThat(line.correct()).as(line.toString()).isTrue();
    assertThat(line.toString())
        .startsWith("{\"scenario\":\"spring-kafka\",")
        .contains("\"paired_ratio\":", "\"target\":0.85", "\"correct\":true")
        .contains("\"listener\":\"" + listener.label() + "\"");

    Workload workload = new Workload(300, 0.2, 7);
    assertThat(workload.distinct).isEqualTo(240);
    JdbcTemplate jdbc =
        new JdbcTemplate(new DriverManagerDataSource(db.jdbcUrl(), db.user(), db.password()));
    assertThat(count(jdbc, "SELECT count(*) FROM " + SCHEMA + ".payments")).isEqualTo(240);
    assertThat(count(jdbc, "SELECT count(DISTINCT payment_id) FROM " + SCHEMA + ".payments"))
        .isEqualTo(240);
    List<Long> balances =
        jdbc.queryForList(
            "SELECT balance_cents FROM " + SCHEMA + ".accounts ORDER BY id", Long.class);
    for (int account = 0; account < Workload.ACCOUNTS; account++) {
      assertThat(balances.get(account))
          .as("balance of account %d", account)
          .isEqualTo(workload.expectedBalances[account]);
    }
    // The inbox variant ran last: one completed key per distinct payment, none for a re-send.
    assertThat(count(jdbc, "SELECT count(*) FROM " + SCHEMA + ".inbox")).isEqualTo(240);
    assertThat(count(jdbc, "SELECT count(*) FROM " + SCHEMA + ".inbox WHERE state <> 'COMPLETED'"))
        .isZero();
  }

  private static long count(JdbcTemplate jdbc, String sql) {
    return jdbc.queryForObject(sql, Long.class);
  }
}
