package dev.inbox.spring.autoconfigure;

import dev.inbox.Inbox;
import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import dev.inbox.micrometer.MicrometerInboxListener;
import dev.inbox.spi.CallerTransactions;
import dev.inbox.spi.InboxListener;
import dev.inbox.spring.CompositeInboxListener;
import dev.inbox.spring.InboxMigration;
import dev.inbox.spring.SpringCallerTransactions;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * An {@link Inbox} on the application's {@link DataSource}, joined to Spring's transactions on it
 * ({@link SpringCallerTransactions}), configured from {@code inbox.*} ({@link InboxProperties}),
 * its table migrated at startup by {@link InboxMigration} after the application's Flyway or
 * Liquibase (or its DDL logged with {@code inbox.migration.enabled=false}), and its meters in the
 * application's {@code MeterRegistry} when there is one. Every {@code InboxListener} bean (the
 * meters, the health indicator's, the application's own) receives the inbox's events.
 *
 * <p>Every bean backs off when the application declares one of the same type. Auto-configurations
 * that moved packages between Boot 3 and Boot 4 are named by strings, both lines' names, so that
 * this class loads on either.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnClass({Inbox.class, TransactionSynchronizationManager.class})
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnProperty(prefix = "inbox", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(InboxProperties.class)
public class InboxAutoConfiguration {
  private static final Logger log = LoggerFactory.getLogger(InboxAutoConfiguration.class);

  @Bean
  @ConditionalOnMissingBean
  public InboxSettings inboxSettings(
      InboxProperties properties, ObjectProvider<InboxListener> listeners) {
    InboxSettings.Builder settings = properties.toSettings();
    List<InboxListener> all = listeners.orderedStream().toList();
    if (all.size() == 1) {
      settings.listener(all.get(0));
    } else if (all.size() > 1) {
      settings.listener(new CompositeInboxListener(all));
    }
    return settings.build();
  }

  @Bean
  @ConditionalOnMissingBean
  public CallerTransactions inboxCallerTransactions(DataSource dataSource) {
    return new SpringCallerTransactions(dataSource);
  }

  /**
   * The table's migration, a database initializer of its own (see {@link InboxMigration}): Boot
   * orders it after the application's Flyway and Liquibase.
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "inbox.migration", name = "enabled", matchIfMissing = true)
  public InboxMigration inboxMigration(DataSource dataSource, InboxSettings settings) {
    return new InboxMigration(dataSource, settings);
  }

  /**
   * The inbox, created after every database initializer (Flyway, Liquibase, its own migration), so
   * that its table exists when the janitor starts, also when Liquibase creates it.
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  @DependsOnDatabaseInitialization
  public Inbox inbox(
      DataSource dataSource,
      InboxSettings settings,
      CallerTransactions callerTransactions,
      InboxProperties properties,
      ObjectProvider<InboxMigration> migration) {
    // Also without Boot's database initialization ordering (no JdbcTemplate, Flyway or JPA
    // auto-configuration): creating the migration bean migrates the table.
    migration.getIfAvailable();
    if (!properties.getMigration().isEnabled()) {
      log.info(
          "inbox.migration.enabled=false: the inbox expects its table {} to exist; create it with"
              + " (Liquibase, your own Flyway):\n{}",
          settings.qualifiedTable(),
          InboxSchema.sql(settings));
    }
    return Inbox.builder()
        .dataSource(dataSource)
        .settings(settings)
        .callerTransactions(callerTransactions)
        .build();
  }

  /** Meters named {@code inbox.*} in the application's registry, when Micrometer is set up. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  @ConditionalOnBean(MeterRegistry.class)
  static class MicrometerConfiguration {
    @Bean
    @ConditionalOnMissingBean(MicrometerInboxListener.class)
    InboxListener inboxMicrometerListener(MeterRegistry registry) {
      return new MicrometerInboxListener(registry);
    }
  }
}
