package dev.inbox.internal;

import dev.inbox.InboxSettings;
import dev.inbox.Storage;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A child JVM for {@code PartitionedCrashTest}: rotates and retires without pause, making every
 * generation old enough to retire after each rotation, until it is killed. Arguments: JDBC URL,
 * user (empty: none), schema.
 */
public final class PartitionedRotationProcess {
  private PartitionedRotationProcess() {}

  public static void main(String[] args) throws Exception {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setUrl(args[0]);
    if (!args[1].isEmpty()) {
      dataSource.setUser(args[1]);
    }
    InboxSettings settings =
        InboxSettings.builder()
            .schema(args[2])
            .storage(Storage.PARTITIONED)
            .janitorInterval(Duration.ZERO)
            .build();
    Generations generations = new Generations(dataSource, settings);
    while (true) {
      generations.rotate(true);
      try (Connection c = dataSource.getConnection();
          Statement s = c.createStatement()) {
        s.execute(
            "UPDATE "
                + args[2]
                + ".inbox_generations SET started_at = now() - interval '25 hours'");
      }
      generations.retire();
      System.out.println("pass done");
    }
  }
}
