/**
 * The public API of the inbox: claim a message id or Idempotency-Key in PostgreSQL inside the same
 * transaction as the handler's own writes, so that a duplicate has no effect and a retry gets the
 * first answer back. Start with {@link dev.inbox.Inbox#builder()}.
 */
package dev.inbox;
