package dev.inbox.http;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.testing.EffectsTable;
import java.util.concurrent.CountDownLatch;

/** The test server in its own JVM. Arguments: JDBC URL, database user, schema, port. */
public final class HttpServerProcess {
  public static void main(String[] args) throws Exception {
    HikariDataSource dataSource =
        InboxDataSources.pool(args[0], args[1].isEmpty() ? null : args[1], null, 8);
    Inbox inbox =
        Inbox.builder()
            .dataSource(dataSource)
            .settings(FilterTestBase.settings(args[2]).build())
            .build();
    new TestServer(
        inbox, dataSource, new EffectsTable(dataSource, args[2]), Integer.parseInt(args[3]));
    System.out.println("server started");
    new CountDownLatch(1).await();
  }
}
