package dev.inbox.http;

import jakarta.servlet.ServletRequest;
import java.sql.Connection;
import java.util.Optional;

/**
 * What {@link IdempotencyFilter} tells the application about a request it protects: in {@link
 * IdempotencyFilter.Mode#TRANSACTIONAL} mode, the inbox transaction, so that the handler's writes
 * commit together with the key and the stored response, or not at all; in both modes, the scope and
 * key it was claimed as.
 *
 * <p>Write through {@link #connection}, and never commit or roll it back: the filter commits when
 * the response's status is stored (2xx and 4xx by default) and rolls back otherwise, or when the
 * handler throws. {@code close()} on it does nothing.
 */
public final class IdempotentRequests {
  /** The request attribute that holds the {@link Connection} (transactional mode only). */
  public static final String CONNECTION_ATTRIBUTE = "dev.inbox.http.connection";

  /** The request attribute that holds the scope the key was claimed in. */
  public static final String SCOPE_ATTRIBUTE = "dev.inbox.http.scope";

  /** The request attribute that holds the parsed Idempotency-Key. */
  public static final String KEY_ATTRIBUTE = "dev.inbox.http.key";

  private IdempotentRequests() {}

  /**
   * The inbox transaction of the request.
   *
   * @throws IllegalStateException when the request did not pass through the filter in transactional
   *     mode with a key
   */
  public static Connection connection(ServletRequest request) {
    return transaction(request)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "this request has no inbox transaction: is IdempotencyFilter mapped to it, in"
                        + " TRANSACTIONAL mode, and did it carry an Idempotency-Key?"));
  }

  /** The inbox transaction of the request, or empty outside transactional mode. */
  public static Optional<Connection> transaction(ServletRequest request) {
    return Optional.ofNullable((Connection) request.getAttribute(CONNECTION_ATTRIBUTE));
  }

  /** The scope the request's key was claimed in, or empty when the filter did not claim it. */
  public static Optional<String> scope(ServletRequest request) {
    return Optional.ofNullable((String) request.getAttribute(SCOPE_ATTRIBUTE));
  }

  /** The request's parsed Idempotency-Key, or empty when the filter did not claim it. */
  public static Optional<String> key(ServletRequest request) {
    return Optional.ofNullable((String) request.getAttribute(KEY_ATTRIBUTE));
  }
}
