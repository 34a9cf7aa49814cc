package dev.inbox.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/** One in-process run of the CLI: its exit code and what it printed on stdout and stderr. */
record CliRun(int exitCode, String out, String err) {

  static CliRun run(List<String> connection, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    // The connection's options go after the command's name, as an operator types them.
    int after = all.isEmpty() ? 0 : 1;
    all.addAll(after, connection);
    return runExactly(all.toArray(new String[0]));
  }

  static CliRun runExactly(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = InboxCli.commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int exitCode = cli.execute(args);
    return new CliRun(exitCode, out.toString(), err.toString());
  }

  @Override
  public String toString() {
    return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
  }
}
