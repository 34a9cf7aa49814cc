package dev.inbox.cli;

import picocli.CommandLine.Parameters;

/** The key a command works on, as {@code SCOPE KEY}; mixed into show, release and settle. */
final class KeyArguments {
  @Parameters(index = "0", paramLabel = "SCOPE", description = "The key's scope.")
  String scope;

  @Parameters(index = "1", paramLabel = "KEY", description = "The key.")
  String key;

  /** How messages name the key. */
  String describe() {
    return "key '" + key + "' in scope '" + scope + "'";
  }
}
