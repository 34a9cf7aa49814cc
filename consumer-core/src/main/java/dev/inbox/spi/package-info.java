/**
 * Extension points: implement {@link dev.inbox.spi.InboxListener} to observe claims, handlers,
 * batches and purges.
 */
package dev.inbox.spi;
