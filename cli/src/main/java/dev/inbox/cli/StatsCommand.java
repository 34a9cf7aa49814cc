package dev.inbox.cli;

import dev.inbox.Inbox;
import dev.inbox.InboxStats;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "stats",
    mixinStandardHelpOptions = true,
    description = {
      "Counts per scope and state (with expired leases and keys that gave up), the oldest lease,"
          + " the table's size and the last purge. Reads only; it scans the whole table."
    })
final class StatsCommand implements Callable<Integer> {
  @Mixin DatabaseOptions db;
  @Spec CommandSpec spec;

  @Option(names = "--json", description = "Print one JSON object instead of text.")
  boolean json;

  @Override
  public Integer call() {
    InboxStats stats;
    try (Inbox inbox = db.open(null)) {
      stats = inbox.admin().stats();
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      List<Json> counts = new ArrayList<>();
      for (InboxStats.Count c : stats.counts()) {
        counts.add(
            new Json()
                .field("scope", c.scope())
                .field("state", c.state())
                .field("count", c.count())
                .field("expiredLeases", c.expiredLeases())
                .field("gaveUp", c.gaveUp()));
      }
      out.println(
          new Json()
              .field("table", db.schema + "." + db.table)
              .field("databaseNow", stats.databaseNow())
              .field("counts", counts)
              .field("oldestLease", stats.oldestLease())
              .field("tableBytes", stats.tableBytes())
              .field("lastPurgeAt", stats.lastPurgeAt())
              .field("lastPurgeDeleted", stats.lastPurgeDeleted()));
    } else {
      out.println(
          "inbox table "
              + db.schema
              + "."
              + db.table
              + " at "
              + stats.databaseNow()
              + " (database clock)");
      out.printf("%-14s %s%n", "size", bytes(stats.tableBytes()) + " (table, indexes and TOAST)");
      out.printf(
          "%-14s %s%n",
          "oldest lease",
          stats.oldestLease() == null
              ? "none"
              : stats.oldestLease()
                  + " (claimed "
                  + Records.age(Duration.between(stats.oldestLease(), stats.databaseNow()))
                  + " ago)");
      out.printf(
          "%-14s %s%n",
          "last purge",
          stats.lastPurgeAt() == null
              ? "none recorded"
              : stats.lastPurgeAt()
                  + " ("
                  + Records.age(Duration.between(stats.lastPurgeAt(), stats.databaseNow()))
                  + " ago), deleted "
                  + stats.lastPurgeDeleted()
                  + " rows");
      out.println();
      if (stats.counts().isEmpty()) {
        out.println("the table is empty");
      } else {
        String format = "%-24s %-12s %10s %15s %8s%n";
        out.printf(format, "SCOPE", "STATE", "COUNT", "EXPIRED LEASES", "GAVE UP");
        for (InboxStats.Count c : stats.counts()) {
          out.printf(format, c.scope(), c.state(), c.count(), c.expiredLeases(), c.gaveUp());
        }
      }
    }
    out.flush();
    return 0;
  }

  static String bytes(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String units = "KMGT";
    double value = bytes;
    int unit = -1;
    while (value >= 1024 && unit < units.length() - 1) {
      value /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, "%.1f %siB", value, units.charAt(unit));
  }
}
