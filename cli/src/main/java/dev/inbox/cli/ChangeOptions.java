package dev.inbox.cli;

import dev.inbox.AdminAction;
import picocli.CommandLine.Option;

/** Who changes a key and why, for the audit trail; mixed into release and settle. */
final class ChangeOptions {
  @Option(
      names = "--reason",
      required = true,
      description = "Why (a ticket, the provider's answer); kept in the audit trail.")
  String reason;

  @Option(
      names = "--actor",
      description = "Who, for the audit trail (default: the operating system's user).")
  String actor;

  @Option(
      names = "--force",
      description =
          "Take the key from a live lease. Its owner may still be performing the side effect:"
              + " a double effect unless that effect is idempotent. The owner's complete() then"
              + " fails with LeaseLostException.")
  boolean force;

  AdminAction action() {
    AdminAction action = AdminAction.of(actor == null ? DatabaseOptions.osUser() : actor, reason);
    return force ? action.forced() : action;
  }
}
