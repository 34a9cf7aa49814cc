package dev.inbox;

import dev.inbox.spi.InboxListener;
import dev.inbox.spi.Listeners;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The immutable configuration of an {@link Inbox}. Every setter of {@link Builder} fails fast with
 * the setting's name and the bad value; {@link Builder#build()} checks the settings against each
 * other.
 */
public final class InboxSettings {
  /** Defaults to the {@code public} schema. */
  public static final String DEFAULT_SCHEMA = "public";

  /** Defaults to a table named {@code inbox}. */
  public static final String DEFAULT_TABLE = "inbox";

  /** A concurrent claimant of the same key waits at most 5 seconds on the first one's row lock. */
  public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(5);

  /** A leased claim owns its key for 30 seconds unless renewed. */
  public static final Duration DEFAULT_LEASE_DURATION = Duration.ofSeconds(30);

  /** A key that failed 5 times gives up. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;

  /** Completed records are kept for 24 hours, like Stripe's keys. */
  public static final Duration DEFAULT_RETENTION = Duration.ofHours(24);

  /** Purge deletes at most 10 000 rows per statement. */
  public static final int DEFAULT_PURGE_BATCH_SIZE = 10_000;

  /** The janitor purges every minute. */
  public static final Duration DEFAULT_JANITOR_INTERVAL = Duration.ofMinutes(1);

  /** One plain table. */
  public static final Storage DEFAULT_STORAGE = Storage.TABLE;

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,47}");

  private final String schema;
  private final String table;
  private final Duration lockTimeout;
  private final Duration leaseDuration;
  private final int maxAttempts;
  private final Duration retention;
  private final int purgeBatchSize;
  private final Duration janitorInterval;
  private final Clock clock;
  private final InboxListener listener;
  private final String ownerId;
  private final Storage storage;

  private InboxSettings(Builder b) {
    this.schema = b.schema;
    this.table = b.table;
    this.lockTimeout = b.lockTimeout;
    this.leaseDuration = b.leaseDuration;
    this.maxAttempts = b.maxAttempts;
    this.retention = b.retention;
    this.purgeBatchSize = b.purgeBatchSize;
    this.janitorInterval = b.janitorInterval;
    this.clock = b.clock;
    this.listener = Listeners.nonThrowing(InboxListener.class, b.listener);
    this.ownerId = b.ownerId;
    this.storage = b.storage;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** All defaults. */
  public static InboxSettings defaults() {
    return builder().build();
  }

  public Builder toBuilder() {
    return new Builder()
        .schema(schema)
        .table(table)
        .lockTimeout(lockTimeout)
        .leaseDuration(leaseDuration)
        .maxAttempts(maxAttempts)
        .retention(retention)
        .purgeBatchSize(purgeBatchSize)
        .janitorInterval(janitorInterval)
        .clock(clock)
        .listener(listener)
        .ownerId(ownerId)
        .storage(storage);
  }

  public String schema() {
    return schema;
  }

  public String table() {
    return table;
  }

  /**
   * {@code "schema"."table"}: both validated lower-case identifiers, quoted, so that it is safe to
   * put into SQL even when a name is a reserved word such as {@code user}.
   */
  public String qualifiedTable() {
    return '"' + schema + "\".\"" + table + '"';
  }

  public Duration lockTimeout() {
    return lockTimeout;
  }

  public Duration leaseDuration() {
    return leaseDuration;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  public Duration retention() {
    return retention;
  }

  public int purgeBatchSize() {
    return purgeBatchSize;
  }

  public Duration janitorInterval() {
    return janitorInterval;
  }

  /**
   * The clock given to {@link Builder#clock}.
   *
   * @deprecated the inbox reads no time from it; see {@link Builder#clock}
   */
  @Deprecated
  public Clock clock() {
    return clock;
  }

  public InboxListener listener() {
    return listener;
  }

  public String ownerId() {
    return ownerId;
  }

  public Storage storage() {
    return storage;
  }

  @Override
  public String toString() {
    return "InboxSettings[table="
        + schema
        + "."
        + table
        + ", lockTimeout="
        + lockTimeout
        + ", leaseDuration="
        + leaseDuration
        + ", maxAttempts="
        + maxAttempts
        + ", retention="
        + retention
        + ", purgeBatchSize="
        + purgeBatchSize
        + ", janitorInterval="
        + janitorInterval
        + ", ownerId="
        + ownerId
        + ", storage="
        + storage
        + "]";
  }

  /** Builds {@link InboxSettings}; every value is checked as it is set. */
  public static final class Builder {
    private String schema = DEFAULT_SCHEMA;
    private String table = DEFAULT_TABLE;
    private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
    private Duration leaseDuration = DEFAULT_LEASE_DURATION;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private Duration retention = DEFAULT_RETENTION;
    private int purgeBatchSize = DEFAULT_PURGE_BATCH_SIZE;
    private Duration janitorInterval = DEFAULT_JANITOR_INTERVAL;
    private Clock clock = Clock.systemUTC();
    private InboxListener listener = InboxListener.NOOP;
    private String ownerId = defaultOwnerId();
    private Storage storage = DEFAULT_STORAGE;

    private Builder() {}

    /**
     * The schema of the inbox table: a lower-case SQL identifier, which may be a reserved word (the
     * inbox quotes it). Defaults to {@code public}.
     */
    public Builder schema(String schema) {
      this.schema = identifier("schema", schema);
      return this;
    }

    /**
     * The inbox table's name: a lower-case SQL identifier, which may be a reserved word (the inbox
     * quotes it). Defaults to {@code inbox}.
     */
    public Builder table(String table) {
      this.table = identifier("table", table);
      return this;
    }

    /**
     * How long a claim waits for a concurrent claimant of the same key to commit or roll back,
     * before it answers {@link ClaimOutcome#IN_PROGRESS}. Defaults to 5 seconds.
     */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = positive("lockTimeout", lockTimeout);
      if (lockTimeout.toMillis() < 1) {
        throw new IllegalArgumentException(
            "lockTimeout must be at least 1 millisecond, but was " + lockTimeout);
      }
      return this;
    }

    /** How long a leased claim owns its key unless renewed. Defaults to 30 seconds. */
    public Builder leaseDuration(Duration leaseDuration) {
      this.leaseDuration = positive("leaseDuration", leaseDuration);
      return this;
    }

    /** How many failed attempts a key gets before it gives up. Defaults to 5. */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException(
            "maxAttempts must be at least 1, but was " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** How long completed records are kept for deduplication. Defaults to 24 hours. */
    public Builder retention(Duration retention) {
      this.retention = positive("retention", retention);
      return this;
    }

    /** Rows deleted per purge statement. Defaults to 10 000. */
    public Builder purgeBatchSize(int purgeBatchSize) {
      if (purgeBatchSize < 1) {
        throw new IllegalArgumentException(
            "purgeBatchSize must be at least 1, but was " + purgeBatchSize);
      }
      this.purgeBatchSize = purgeBatchSize;
      return this;
    }

    /** How often the janitor purges; {@code Duration.ZERO} turns it off. Defaults to 1 minute. */
    public Builder janitorInterval(Duration janitorInterval) {
      Objects.requireNonNull(janitorInterval, "janitorInterval must not be null");
      if (janitorInterval.isNegative()) {
        throw new IllegalArgumentException(
            "janitorInterval must be zero (off) or positive, but was " + janitorInterval);
      }
      this.janitorInterval = janitorInterval;
      return this;
    }

    /**
     * Accepted and ignored. Every time the inbox writes (created, updated, completed, a lease's
     * end) and every comparison that decides who owns a lease or what is purged is the database's
     * ({@code now()}), so that nodes whose clocks disagree never disagree on them. Defaults to the
     * UTC system clock.
     *
     * @deprecated the inbox reads no time from it; tests that need a lease or a record to be old
     *     move its timestamps in the table instead
     */
    @Deprecated
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock must not be null");
      return this;
    }

    /**
     * Receives metrics events. Defaults to a no-op. An exception it throws is logged and ignored,
     * so that it never changes what happens to a message.
     */
    public Builder listener(InboxListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener must not be null");
      return this;
    }

    /** The lease owner written on leased claims. Defaults to host, pid and a random suffix. */
    public Builder ownerId(String ownerId) {
      String rule = InboxKeys.brokenRule(ownerId);
      if (rule != null) {
        throw new IllegalArgumentException("ownerId " + rule);
      }
      this.ownerId = ownerId;
      return this;
    }

    /**
     * How the table stores its records: {@link Storage#TABLE} or {@link Storage#PARTITIONED}. An
     * inbox refuses to start on a table of the other layout. Defaults to {@link Storage#TABLE}.
     */
    public Builder storage(Storage storage) {
      this.storage = Objects.requireNonNull(storage, "storage must not be null");
      return this;
    }

    public InboxSettings build() {
      if (leaseDuration.compareTo(lockTimeout) <= 0) {
        throw new IllegalArgumentException(
            "leaseDuration must be longer than lockTimeout ("
                + lockTimeout
                + "), but was "
                + leaseDuration);
      }
      return new InboxSettings(this);
    }

    private static Duration positive(String name, Duration value) {
      Objects.requireNonNull(value, name + " must not be null");
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, but was " + value);
      }
      return value;
    }

    private static String identifier(String name, String value) {
      if (value == null || !IDENTIFIER.matcher(value).matches()) {
        throw new IllegalArgumentException(
            name
                + " must be a lower-case SQL identifier of at most 48 characters ([a-z_][a-z0-9_]*),"
                + " but was "
                + InboxKeys.describe(value));
      }
      return value;
    }

    private static String defaultOwnerId() {
      return ManagementFactory.getRuntimeMXBean().getName()
          + "/"
          + UUID.randomUUID().toString().substring(0, 8);
    }
  }
}
