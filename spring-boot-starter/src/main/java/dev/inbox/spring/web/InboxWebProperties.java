package dev.inbox.spring.web;

import dev.inbox.http.IdempotencyFilter;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The {@code inbox.web.*} properties of {@link Idempotent} endpoints. Each default is the HTTP
 * adapter's own ({@link IdempotencyFilter}); the retention of keys is the inbox's ({@code
 * inbox.retention}). A bad value fails the application's startup with a message that names it.
 */
@ConfigurationProperties(prefix = "inbox.web")
public class InboxWebProperties {

  /** Whether to protect @Idempotent handler methods at all. */
  private boolean enabled = true;

  /**
   * The scope of an unauthenticated request's key. Every anonymous caller shares it, so that any of
   * them can replay another's key: set it empty to refuse such requests with 401 instead.
   */
  private String anonymousScope = "anonymous";

  /** How long a retry waits for the first request with its key before it gets 409. */
  private Duration inFlightWait = IdempotencyFilter.DEFAULT_IN_FLIGHT_WAIT;

  /** The Retry-After of a 409 (whole seconds, at least 1). */
  private Duration retryAfter = IdempotencyFilter.DEFAULT_RETRY_AFTER;

  /** The largest request body accepted (it is buffered for the fingerprint); larger gets 413. */
  private DataSize maxRequestBody = DataSize.ofBytes(IdempotencyFilter.DEFAULT_MAX_REQUEST_BODY);

  /** The largest response body stored for replay; a larger one is replayed without its body. */
  private DataSize maxStoredBody = DataSize.ofBytes(IdempotencyFilter.DEFAULT_MAX_STORED_BODY);

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public String getAnonymousScope() {
    return anonymousScope;
  }

  public void setAnonymousScope(String anonymousScope) {
    this.anonymousScope = anonymousScope;
  }

  public Duration getInFlightWait() {
    return inFlightWait;
  }

  public void setInFlightWait(Duration inFlightWait) {
    this.inFlightWait = inFlightWait;
  }

  public Duration getRetryAfter() {
    return retryAfter;
  }

  public void setRetryAfter(Duration retryAfter) {
    this.retryAfter = retryAfter;
  }

  public DataSize getMaxRequestBody() {
    return maxRequestBody;
  }

  public void setMaxRequestBody(DataSize maxRequestBody) {
    this.maxRequestBody = maxRequestBody;
  }

  public DataSize getMaxStoredBody() {
    return maxStoredBody;
  }

  public void setMaxStoredBody(DataSize maxStoredBody) {
    this.maxStoredBody = maxStoredBody;
  }
}
