package dev.inbox.spring.autoconfigure;

import dev.inbox.InboxSettings;
import dev.inbox.Storage;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code inbox.*} properties. Each default is the library's own ({@link InboxSettings}), so an
 * application that sets nothing runs the inbox exactly as the plain-Java builder would. A bad value
 * (a non-positive duration, an invalid schema name) fails the application's startup with the
 * settings' own message, which names the value.
 */
@ConfigurationProperties(prefix = "inbox")
public class InboxProperties {

  /** Whether to auto-configure the Inbox bean at all. */
  private boolean enabled = true;

  /** Schema of the inbox table; created by the migration when missing. */
  private String schema = InboxSettings.DEFAULT_SCHEMA;

  /** Name of the inbox table; its Flyway history is "<table>_schema_history". */
  private String table = InboxSettings.DEFAULT_TABLE;

  /**
   * How the inbox table stores its records: "table" (one plain table; the janitor deletes expired
   * keys in batches) or "partitioned" (generations the janitor drops whole; needs READ COMMITTED
   * callers). The inbox refuses to start on a table of the other layout.
   */
  private Storage storage = InboxSettings.DEFAULT_STORAGE;

  /** How long a claim waits for another transaction that holds the same key. */
  private Duration lockTimeout = InboxSettings.DEFAULT_LOCK_TIMEOUT;

  /** The lease of the leased mode (side effects outside the database). */
  private Duration leaseDuration = InboxSettings.DEFAULT_LEASE_DURATION;

  /** Failed attempts after which a key gives up (GAVE_UP) and its message is dead-lettered. */
  private int maxAttempts = InboxSettings.DEFAULT_MAX_ATTEMPTS;

  /** How long completed keys are kept (the dedup window) before the janitor purges them. */
  private Duration retention = InboxSettings.DEFAULT_RETENTION;

  /** Rows the janitor deletes per statement, so that purging never holds long locks. */
  private int purgeBatchSize = InboxSettings.DEFAULT_PURGE_BATCH_SIZE;

  /** How often the janitor purges expired keys. */
  private Duration janitorInterval = InboxSettings.DEFAULT_JANITOR_INTERVAL;

  /**
   * Who holds leases taken by this node, shown to operators; defaults to the host name and process
   * id.
   */
  private String ownerId;

  private final Migration migration = new Migration();

  private final Listeners listeners = new Listeners();

  /** The inbox under @KafkaListener and @RabbitListener methods. */
  public static class Listeners {
    /**
     * Whether to claim each message's key inside every @KafkaListener and @RabbitListener method's
     * transaction. While on, a listener method that is not @Transactional fails the startup.
     */
    private boolean enabled = true;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }
  }

  private final Health health = new Health();

  /** The Actuator health indicator "inbox". */
  public static class Health {
    /** Whether to contribute the "inbox" health indicator when Actuator is present. */
    private boolean enabled = true;

    /**
     * The age (by the database's clock) of the oldest IN_PROGRESS key at which the inbox reports
     * DOWN: a lease held that long is stuck.
     */
    private Duration inProgressThreshold = Duration.ofMinutes(5);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getInProgressThreshold() {
      return inProgressThreshold;
    }

    public void setInProgressThreshold(Duration inProgressThreshold) {
      this.inProgressThreshold = inProgressThreshold;
    }
  }

  /** The inbox table's own Flyway migration. */
  public static class Migration {
    /**
     * Whether to create or upgrade the inbox table at startup (with its own Flyway history table,
     * apart from the application's). Set to false where Liquibase or a DBA owns the schema: the DDL
     * to apply is then logged at startup (INFO, logger dev.inbox.spring.autoconfigure).
     */
    private boolean enabled = true;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }
  }

  /** Builds the library's settings; the listener (metrics) is added by the auto-configuration. */
  public InboxSettings.Builder toSettings() {
    InboxSettings.Builder settings =
        InboxSettings.builder()
            .schema(schema)
            .table(table)
            .storage(storage)
            .lockTimeout(lockTimeout)
            .leaseDuration(leaseDuration)
            .maxAttempts(maxAttempts)
            .retention(retention)
            .purgeBatchSize(purgeBatchSize)
            .janitorInterval(janitorInterval);
    if (ownerId != null) {
      settings.ownerId(ownerId);
    }
    return settings;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Storage getStorage() {
    return storage;
  }

  public void setStorage(Storage storage) {
    this.storage = storage;
  }

  public String getSchema() {
    return schema;
  }

  public void setSchema(String schema) {
    this.schema = schema;
  }

  public String getTable() {
    return table;
  }

  public void setTable(String table) {
    this.table = table;
  }

  public Duration getLockTimeout() {
    return lockTimeout;
  }

  public void setLockTimeout(Duration lockTimeout) {
    this.lockTimeout = lockTimeout;
  }

  public Duration getLeaseDuration() {
    return leaseDuration;
  }

  public void setLeaseDuration(Duration leaseDuration) {
    this.leaseDuration = leaseDuration;
  }

  public int getMaxAttempts() {
    return maxAttempts;
  }

  public void setMaxAttempts(int maxAttempts) {
    this.maxAttempts = maxAttempts;
  }

  public Duration getRetention() {
    return retention;
  }

  public void setRetention(Duration retention) {
    this.retention = retention;
  }

  public int getPurgeBatchSize() {
    return purgeBatchSize;
  }

  public void setPurgeBatchSize(int purgeBatchSize) {
    this.purgeBatchSize = purgeBatchSize;
  }

  public Duration getJanitorInterval() {
    return janitorInterval;
  }

  public void setJanitorInterval(Duration janitorInterval) {
    this.janitorInterval = janitorInterval;
  }

  public String getOwnerId() {
    return ownerId;
  }

  public void setOwnerId(String ownerId) {
    this.ownerId = ownerId;
  }

  public Migration getMigration() {
    return migration;
  }

  public Listeners getListeners() {
    return listeners;
  }

  public Health getHealth() {
    return health;
  }
}
