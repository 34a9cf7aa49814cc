/**
 * The HTTP side of the inbox: {@link dev.inbox.http.IdempotencyFilter}, a Jakarta Servlet 6 filter
 * for the {@code Idempotency-Key} header that claims each key in the same table and state machine
 * as the message consumers, so that a request retried over HTTP, or the same payment arriving over
 * HTTP and over Kafka in one scope, takes effect once. Handlers reach the request's transaction
 * through {@link dev.inbox.http.IdempotentRequests}; {@link dev.inbox.http.ScopeResolver} decides
 * whose key it is.
 */
package dev.inbox.http;
