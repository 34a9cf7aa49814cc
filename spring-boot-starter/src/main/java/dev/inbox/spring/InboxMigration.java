package dev.inbox.spring;

import dev.inbox.InboxSchema;
import dev.inbox.InboxSettings;
import javax.sql.DataSource;
import org.springframework.beans.factory.InitializingBean;

/**
 * The inbox table's migration ({@link InboxSchema#migrate}), run when this bean is created. The
 * starter declares it unless {@code inbox.migration.enabled=false}.
 *
 * <p>Spring Boot knows it as a database initializer, like its own Flyway and Liquibase beans: it
 * runs after them, so that the application's Flyway finds the schema as the application left it
 * (Flyway refuses a non-empty schema without its history table), and everything that depends on
 * database initialization waits for it: {@code JdbcTemplate}, JPA's {@code EntityManagerFactory},
 * any bean annotated {@code @DependsOnDatabaseInitialization}, and the {@code Inbox} bean.
 */
public final class InboxMigration implements InitializingBean {
  private final DataSource dataSource;
  private final InboxSettings settings;

  public InboxMigration(DataSource dataSource, InboxSettings settings) {
    this.dataSource = dataSource;
    this.settings = settings;
  }

  @Override
  public void afterPropertiesSet() {
    InboxSchema.migrate(dataSource, settings);
  }
}
