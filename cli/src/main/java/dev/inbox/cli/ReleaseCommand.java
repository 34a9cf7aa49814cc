package dev.inbox.cli;

import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.KeyReport;
import dev.inbox.ReleaseResult;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(
    name = "release",
    mixinStandardHelpOptions = true,
    description = {
      "Free a FAILED key (one that gave up, too) or one whose lease expired, so that the next"
          + " delivery or claim runs it again as NEW, exactly once. Its attempts are reset and its"
          + " fencing token grows, so that a late lease holder cannot record a result.",
      "A key under a live lease needs --force. A COMPLETED key is never released.",
      "Audited in the same transaction. Exits with 3, changing nothing, when the key has no"
          + " record, cannot be released, or is under a live lease without --force."
    })
final class ReleaseCommand implements Callable<Integer> {
  @Mixin DatabaseOptions db;
  @Mixin ChangeOptions change;
  @Spec CommandSpec spec;

  @Mixin KeyArguments target;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (Inbox inbox = db.open(null)) {
      KeyReport before = inbox.admin().show(target.scope, target.key);
      ReleaseResult result = inbox.admin().release(target.scope, target.key, change.action());
      String which = target.describe();
      switch (result) {
        case RELEASED -> {
          InboxRecord after = inbox.admin().find(target.scope, target.key).orElseThrow();
          if (before.leaseLive()) {
            err.println(
                "WARNING: forced: the live lease of owner '"
                    + before.record().leaseOwner()
                    + "' was taken away; if it is still running, its side effect may happen as"
                    + " well as the next claim's, and its complete() fails with"
                    + " LeaseLostException.");
          }
          out.println(
              "released "
                  + which
                  + ": was "
                  + describe(before.record())
                  + "; now "
                  + describe(after)
                  + ". The next delivery or claim runs it as NEW. Audited as '"
                  + change.action().actor()
                  + "'.");
          return 0;
        }
        case NOT_FOUND -> {
          err.println(
              "no record for "
                  + which
                  + "; nothing to release (the next claim runs it as NEW anyway). Check the scope"
                  + " and the key with `inbox list`.");
          return InboxCli.EXIT_REFUSED;
        }
        default -> {
          err.println(
              which
                  + " is "
                  + describe(before.record())
                  + ", which is not released: a COMPLETED key's effect is committed (a claim"
                  + " committed without complete() counts as completed). Nothing was changed.");
          return InboxCli.EXIT_REFUSED;
        }
      }
    } finally {
      out.flush();
      err.flush();
    }
  }

  static String describe(InboxRecord r) {
    return r == null
        ? "no record"
        : r.state() + " (attempts " + r.attempts() + ", fencing token " + r.fencingToken() + ")";
  }
}
