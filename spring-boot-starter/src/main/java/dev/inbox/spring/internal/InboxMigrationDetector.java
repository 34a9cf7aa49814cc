package dev.inbox.spring.internal;

import dev.inbox.spring.InboxMigration;
import java.util.Set;
import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.core.Ordered;

/**
 * Tells Boot that {@link InboxMigration} initializes the database (META-INF/spring.factories). Boot
 * runs initializers in the order of their detectors: ordered last, the inbox migrates after Flyway,
 * Liquibase and the SQL scripts, none of which then finds the inbox's tables in a schema it
 * expected to be its own.
 */
class InboxMigrationDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

  @Override
  protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
    return Set.of(InboxMigration.class);
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
