package dev.inbox.cli;

import dev.inbox.Inbox;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "purge",
    mixinStandardHelpOptions = true,
    description = {
      "Delete COMPLETED records older than the retention, as the application's janitor does:"
          + " a purged key would run again as NEW if it were delivered again.",
      "--dry-run only counts them; --yes deletes them. One of the two is required."
    })
final class PurgeCommand implements Callable<Integer> {
  @Mixin DatabaseOptions db;
  @Spec CommandSpec spec;

  @ArgGroup(multiplicity = "1")
  Mode mode;

  static final class Mode {
    @Option(names = "--dry-run", required = true, description = "Count, delete nothing.")
    boolean dryRun;

    @Option(names = "--yes", required = true, description = "Delete them.")
    boolean yes;
  }

  @Option(
      names = "--retention",
      defaultValue = "24h",
      converter = DurationConverter.class,
      description =
          "Keep records completed within this long; use the application's retention"
              + " (default: ${DEFAULT-VALUE}).")
  Duration retention;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    try (Inbox inbox = db.open(retention)) {
      if (mode.dryRun) {
        long expired = inbox.admin().countExpired();
        out.println(
            expired
                + " records completed more than "
                + Records.age(retention)
                + " ago would be deleted; nothing was deleted (run it with --yes to delete"
                + " them)");
      } else {
        long deleted = inbox.admin().purgeExpired();
        out.println(
            "deleted "
                + deleted
                + " records completed more than "
                + Records.age(retention)
                + " ago");
      }
    }
    out.flush();
    return 0;
  }
}
