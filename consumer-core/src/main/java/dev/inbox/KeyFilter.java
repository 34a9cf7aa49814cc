package dev.inbox;

import java.time.Duration;

/**
 * Which records {@link InboxAdmin#list} returns; every part is optional (null: any).
 *
 * @param scope only this scope
 * @param state only this state
 * @param olderThan only keys first claimed longer ago than this, on the database's clock
 * @param minAttempts only keys with at least this many attempts
 */
public record KeyFilter(String scope, RecordState state, Duration olderThan, Integer minAttempts) {

  public KeyFilter {
    if (scope != null) {
      InboxKeys.validateScope(scope);
    }
    if (olderThan != null && olderThan.isNegative()) {
      throw new IllegalArgumentException("olderThan must not be negative, but was " + olderThan);
    }
    if (minAttempts != null && minAttempts < 0) {
      throw new IllegalArgumentException(
          "minAttempts must not be negative, but was " + minAttempts);
    }
  }

  /** Every record. */
  public static KeyFilter all() {
    return new KeyFilter(null, null, null, null);
  }

  public KeyFilter scope(String scope) {
    return new KeyFilter(scope, state, olderThan, minAttempts);
  }

  public KeyFilter state(RecordState state) {
    return new KeyFilter(scope, state, olderThan, minAttempts);
  }

  public KeyFilter olderThan(Duration olderThan) {
    return new KeyFilter(scope, state, olderThan, minAttempts);
  }

  public KeyFilter minAttempts(Integer minAttempts) {
    return new KeyFilter(scope, state, olderThan, minAttempts);
  }
}
