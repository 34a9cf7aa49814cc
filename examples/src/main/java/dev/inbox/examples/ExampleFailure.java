package dev.inbox.examples;

import dev.inbox.InboxDataSources;

/**
 * A failure a person can act on. Its message is the one line the command prints: what failed, where
 * (with no password), and what to do. The cause is printed only with {@code --verbose}.
 */
final class ExampleFailure extends RuntimeException {
  ExampleFailure(String message, Throwable cause) {
    super(InboxDataSources.maskPasswords(message), cause);
  }
}
