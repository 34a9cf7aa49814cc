/**
 * Spring Boot auto-configuration of the inbox: the {@code Inbox} bean on the application's {@code
 * DataSource}, the {@code inbox.*} properties, the migration, metrics and health. Registered in
 * {@code META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports}; it
 * names auto-configurations that moved between Boot 3 and Boot 4 by their class names, so that one
 * jar runs on both.
 */
package dev.inbox.spring.autoconfigure;
