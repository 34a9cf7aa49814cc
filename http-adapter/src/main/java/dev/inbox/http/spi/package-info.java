/**
 * Extension points of the HTTP adapter: an {@link dev.inbox.http.spi.IdempotencyListener} receives
 * each request's {@link dev.inbox.http.spi.RequestOutcome} and the latency the filter added, for
 * metrics of your own.
 */
package dev.inbox.http.spi;
