package dev.inbox;

import dev.inbox.internal.PostgresInbox;
import dev.inbox.spi.CallerTransactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/** Builds an {@link Inbox}. Only the data source is required. */
public final class InboxBuilder {
  private DataSource dataSource;
  private InboxSettings settings = InboxSettings.defaults();
  private boolean migrate;
  private CallerTransactions callerTransactions = CallerTransactions.NONE;

  InboxBuilder() {}

  /** Any {@link DataSource}; {@link InboxDataSources#pool} builds a sensible HikariCP pool. */
  public InboxBuilder dataSource(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
    return this;
  }

  /** Defaults to {@link InboxSettings#defaults()}. */
  public InboxBuilder settings(InboxSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings must not be null");
    return this;
  }

  /**
   * Where the inbox finds a transaction of the caller's to join: {@code execute}, {@code
   * executeBatch}, the consumers and the HTTP filter then claim and run their handlers on it, so
   * that the handler's writes commit with the key (see {@link CallerTransactions}). Defaults to
   * {@link CallerTransactions#NONE}: the inbox always begins its own transaction.
   */
  public InboxBuilder callerTransactions(CallerTransactions callerTransactions) {
    this.callerTransactions =
        Objects.requireNonNull(callerTransactions, "callerTransactions must not be null");
    return this;
  }

  /** Run the Flyway migration while building. Defaults to false. */
  public InboxBuilder migrate(boolean migrate) {
    this.migrate = migrate;
    return this;
  }

  /**
   * Checks that the database answers, migrates when asked, checks that the table's layout is the
   * {@link InboxSettings#storage() storage} set, and starts the janitor.
   *
   * @throws InboxDatabaseException when the database cannot be reached: fail fast at startup
   * @throws IllegalStateException when the table is partitioned and the storage is TABLE, or the
   *     other way round
   */
  public Inbox build() {
    if (dataSource == null) {
      throw new IllegalStateException("dataSource must be set before build()");
    }
    try (Connection connection = dataSource.getConnection()) {
      if (!connection.isValid(5)) {
        throw new SQLException("connection is not valid", "08006");
      }
    } catch (SQLException e) {
      throw new InboxDatabaseException(null, null, "inbox cannot reach its database at startup", e);
    }
    if (migrate) {
      if (settings.storage() == Storage.TABLE) {
        // Before the plain migrations, which would fail on a partitioned table less clearly.
        InboxSchema.requireLayout(dataSource, settings);
      }
      InboxSchema.migrate(dataSource, settings);
    }
    InboxSchema.requireLayout(dataSource, settings);
    return PostgresInbox.start(dataSource, settings, callerTransactions);
  }
}
