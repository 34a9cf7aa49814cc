package dev.inbox.spring;

import java.lang.reflect.Method;

/**
 * A listener method returned normally, but its transaction was marked rollback-only (by {@code
 * TransactionStatus.setRollbackOnly()}, or by a participant whose failure the method caught): none
 * of its writes commit, the inbox key with them, so the message was not handled. Raised in place of
 * the normal return so that the container does not acknowledge it: its error handling delivers the
 * message again (each such attempt counts towards the inbox's {@code max-attempts}) or dead-letters
 * it, as for a listener that threw.
 */
public class ListenerRolledBackException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ListenerRolledBackException(Method listener) {
    super(
        "listener method "
            + listener
            + " returned normally, but its transaction was marked rollback-only: nothing of it"
            + " commits, so the message is handled as failed and will be delivered again or"
            + " dead-lettered");
  }
}
