package dev.inbox.examples;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/** The consumers' {@code --handler} flag: how new payments are written. */
final class HandlerOption {
  @Option(
      names = "--handler",
      defaultValue = "per-item",
      description =
          "How new payments are written: per-item (one handler call and two statements per"
              + " payment) or at-once (one call per batch, two set-based statements; a failing"
              + " batch is rerun one payment at a time) (default: ${DEFAULT-VALUE}).")
  String handler;

  /** Whether the flag asks for the set-based handler; rejects any other value than the two. */
  boolean atOnce(CommandSpec spec) {
    Validate.oneOf(spec, "--handler", handler, "per-item", "at-once");
    return handler.equals("at-once");
  }
}
