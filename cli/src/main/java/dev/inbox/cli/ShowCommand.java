package dev.inbox.cli;

import dev.inbox.Inbox;
import dev.inbox.KeyReport;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "show",
    mixinStandardHelpOptions = true,
    description = {
      "One key: its state, attempts, lease, fencing token, last error, stored result, and every"
          + " operator's change of it. Reads only.",
      "Exits with 3 when the key has no record and no audit entry."
    })
final class ShowCommand implements Callable<Integer> {
  @Mixin DatabaseOptions db;
  @Spec CommandSpec spec;

  @Mixin KeyArguments target;

  @Option(names = "--json", description = "Print one JSON object (the body as base64).")
  boolean json;

  @Override
  public Integer call() {
    KeyReport report;
    try (Inbox inbox = db.open(null)) {
      report = inbox.admin().show(target.scope, target.key);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(Records.json(report));
    } else {
      Records.text(report).forEach(out::println);
    }
    out.flush();
    return report.record() == null && report.history().isEmpty() ? InboxCli.EXIT_REFUSED : 0;
  }
}
