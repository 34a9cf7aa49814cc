package dev.inbox.cli;

import dev.inbox.Inbox;
import dev.inbox.InboxRecord;
import dev.inbox.KeyReport;
import dev.inbox.SettleResult;
import dev.inbox.StoredResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(
    name = "settle",
    mixinStandardHelpOptions = true,
    description = {
      "Mark a stuck key COMPLETED with a result, for an external effect you reconciled by hand"
          + " (the provider says it was paid). Every later claim is a DUPLICATE, and an HTTP"
          + " retry gets this status, these headers and this body back.",
      "Takes a FAILED key (one that gave up, too) or one whose lease expired; a key under a live"
          + " lease needs --force, and a key without a record --create. A COMPLETED key keeps its"
          + " result.",
      "Audited in the same transaction. Exits with 3, changing nothing, when the key cannot be"
          + " settled or is under a live lease without --force."
    })
final class SettleCommand implements Callable<Integer> {
  /** The largest body read; a stored result is replayed to every retry. */
  static final int MAX_BODY_BYTES = 16 * 1024 * 1024;

  @Mixin DatabaseOptions db;
  @Mixin ChangeOptions change;
  @Spec CommandSpec spec;

  @Mixin KeyArguments target;

  @Option(
      names = "--status",
      required = true,
      description = "The result's status, 100 to 599 (an HTTP status; consumers ignore it).")
  int status;

  @Option(
      names = "--body",
      paramLabel = "FILE",
      description = "The result's body, read from FILE as bytes (- for stdin); default: empty.")
  String body;

  @Option(
      names = "--header",
      paramLabel = "'NAME: VALUE'",
      description = "A header of the result, such as 'Content-Type: application/json'; repeatable.")
  List<String> headers = new ArrayList<>();

  @Option(
      names = "--create",
      description =
          "Settle a key that has no record by creating one. A later delivery of that key is then"
              + " skipped as a duplicate: check the key, since a mistyped one would swallow a real"
              + " message.")
  boolean create;

  @Override
  public Integer call() throws IOException {
    if (status < 100 || status > 599) {
      throw new ParameterException(
          spec.commandLine(), "--status must be between 100 and 599, but was " + status);
    }
    StoredResult result = StoredResult.of(status, headers(), readBody());
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (Inbox inbox = db.open(null)) {
      KeyReport before = inbox.admin().show(target.scope, target.key);
      if (before.record() == null && !create) {
        err.println(
            "no record for "
                + target.describe()
                + ", so it was not settled: settling it creates a COMPLETED record, and a later"
                + " delivery of this key is skipped as a duplicate. Check the key with `inbox"
                + " list`; pass --create if you mean it. Nothing was changed.");
        return InboxCli.EXIT_REFUSED;
      }
      SettleResult settled =
          inbox.admin().settle(target.scope, target.key, result, change.action());
      String which = target.describe();
      if (settled == SettleResult.NOT_SETTLEABLE) {
        err.println(
            which
                + " is "
                + ReleaseCommand.describe(before.record())
                + ", which counts as completed already: its result stands. Nothing was changed.");
        return InboxCli.EXIT_REFUSED;
      }
      InboxRecord after = inbox.admin().find(target.scope, target.key).orElseThrow();
      if (before.leaseLive()) {
        err.println(
            "WARNING: forced: the live lease of owner '"
                + before.record().leaseOwner()
                + "' was taken away; its complete() fails with LeaseLostException, and an effect"
                + " it still performs is not reflected in the result you recorded.");
      }
      out.println(
          "settled "
              + which
              + ": was "
              + ReleaseCommand.describe(before.record())
              + "; now "
              + ReleaseCommand.describe(after)
              + ", status "
              + status
              + ", "
              + result.body().map(b -> b.length).orElse(0)
              + " bytes of body. Every later claim is a DUPLICATE with this result. Audited as '"
              + change.action().actor()
              + "'.");
      return 0;
    } finally {
      out.flush();
      err.flush();
    }
  }

  private Map<String, List<String>> headers() {
    Map<String, List<String>> map = new LinkedHashMap<>();
    for (String header : headers) {
      int colon = header.indexOf(':');
      if (colon <= 0 || header.substring(0, colon).isBlank()) {
        throw new ParameterException(
            spec.commandLine(),
            "--header '" + header + "' must be NAME: VALUE, such as 'Content-Type: text/plain'");
      }
      map.computeIfAbsent(header.substring(0, colon).trim(), n -> new ArrayList<>())
          .add(header.substring(colon + 1).trim());
    }
    return map;
  }

  private byte[] readBody() throws IOException {
    if (body == null) {
      return new byte[0];
    }
    try (InputStream in = "-".equals(body) ? System.in : Files.newInputStream(Path.of(body))) {
      byte[] bytes = in.readNBytes(MAX_BODY_BYTES + 1);
      if (bytes.length > MAX_BODY_BYTES) {
        throw new CliFailure(
            "--body " + body + " is larger than " + MAX_BODY_BYTES + " bytes; nothing was changed",
            null);
      }
      return bytes;
    } catch (NoSuchFileException e) {
      throw new CliFailure("--body " + body + ": no such file; nothing was changed", e);
    }
  }
}
