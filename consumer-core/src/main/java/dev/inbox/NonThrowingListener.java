package dev.inbox;

import dev.inbox.spi.InboxListener;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a listener's exception out of the inbox's work. The listener is called inside claims and
 * right after handlers; an exception there (a Micrometer registry refusing a meter, say) would
 * otherwise turn a handler's success into a counted failure and roll its writes back.
 */
final class NonThrowingListener implements InboxListener {
  private static final Logger log = LoggerFactory.getLogger(NonThrowingListener.class);

  private final InboxListener delegate;

  private NonThrowingListener(InboxListener delegate) {
    this.delegate = delegate;
  }

  static InboxListener wrap(InboxListener listener) {
    return listener instanceof NonThrowingListener || listener == InboxListener.NOOP
        ? listener
        : new NonThrowingListener(listener);
  }

  @Override
  public void claimed(String scope, ClaimOutcome outcome, int count) {
    guard(() -> delegate.claimed(scope, outcome, count));
  }

  @Override
  public void claimLatency(String scope, Duration latency) {
    guard(() -> delegate.claimLatency(scope, latency));
  }

  @Override
  public void handled(String scope, boolean succeeded, Duration latency) {
    guard(() -> delegate.handled(scope, succeeded, latency));
  }

  @Override
  public void batch(String scope, int size, Duration latency) {
    guard(() -> delegate.batch(scope, size, latency));
  }

  @Override
  public void leasesTakenOver(String scope, int count) {
    guard(() -> delegate.leasesTakenOver(scope, count));
  }

  @Override
  public void purged(long rows, Duration latency) {
    guard(() -> delegate.purged(rows, latency));
  }

  @Override
  public void oldestInProgress(Duration age) {
    guard(() -> delegate.oldestInProgress(age));
  }

  private void guard(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      log.warn("the InboxListener {} threw; it must not, and the inbox goes on", delegate, e);
    }
  }
}
