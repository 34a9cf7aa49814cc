package dev.inbox.cli;

import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.KeyFilter;
import dev.inbox.KeyPage;
import dev.inbox.RecordState;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description = {
      "Keys that match the filters, a page at a time, ordered by scope and key. Reads only.",
      "A page that is not the last ends with the --after cursor of the next one."
    })
final class ListCommand implements Callable<Integer> {
  @Mixin DatabaseOptions db;
  @Spec CommandSpec spec;

  @Option(names = "--scope", description = "Only this scope.")
  String scope;

  @Option(names = "--state", description = "Only this state: ${COMPLETION-CANDIDATES}.")
  RecordState state;

  @Option(
      names = "--older-than",
      converter = DurationConverter.class,
      description = "Only keys first claimed longer ago than this, such as 10m or 2h.")
  Duration olderThan;

  @Option(names = "--min-attempts", description = "Only keys with at least this many attempts.")
  Integer minAttempts;

  @Option(
      names = "--limit",
      defaultValue = "50",
      description = "Keys per page, 1 to 10000 (default: ${DEFAULT-VALUE}).")
  int limit;

  @Option(names = "--after", description = "The cursor a previous page printed.")
  String after;

  @Option(names = "--json", description = "Print one JSON object instead of text.")
  boolean json;

  @Override
  public Integer call() {
    KeyFilter filter = new KeyFilter(scope, state, olderThan, minAttempts);
    KeyPage page;
    try (Inbox inbox = db.open(null)) {
      page = inbox.admin().list(filter, after, limit);
    }
    Instant now = page.databaseNow();
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      List<Json> records = new ArrayList<>();
      page.records().forEach(r -> records.add(Records.json(r, now, false)));
      out.println(
          new Json()
              .field("databaseNow", now)
              .field("records", records)
              .field("next", page.next()));
    } else if (page.records().isEmpty()) {
      out.println("no keys match");
    } else {
      String format = "%-20s %-36s %-11s %8s %10s  %s%n";
      out.printf(format, "SCOPE", "KEY", "STATE", "ATTEMPTS", "AGE", "LEASE");
      for (InboxRecord r : page.records()) {
        out.printf(
            format,
            r.scope(),
            r.key(),
            r.state(),
            r.attempts(),
            Records.age(Duration.between(r.createdAt(), now)),
            Records.lease(r, now));
      }
      if (page.next() != null) {
        out.println("more keys match: run it again with --after " + page.next());
      }
    }
    out.flush();
    return 0;
  }
}
