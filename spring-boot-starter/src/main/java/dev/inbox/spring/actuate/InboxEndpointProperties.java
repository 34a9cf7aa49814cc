package dev.inbox.spring.actuate;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code management.endpoint.inbox.*}: settings of the {@code inbox} Actuator endpoint, next to
 * Actuator's own {@code management.endpoint.inbox.access}.
 */
@ConfigurationProperties(prefix = "management.endpoint.inbox")
public class InboxEndpointProperties {
  /** The actor audited when no principal is authenticated. */
  public static final String DEFAULT_ACTOR = "actuator";

  /**
   * Who the audit trail names for a release or settle made without an authenticated principal (no
   * Spring Security, or a rule that lets the request through anonymously). With a principal, its
   * name is audited instead. Defaults to "actuator".
   */
  private String actor = DEFAULT_ACTOR;

  public String getActor() {
    return actor;
  }

  public void setActor(String actor) {
    if (actor == null || actor.isBlank()) {
      throw new IllegalArgumentException(
          "management.endpoint.inbox.actor must name who changes keys, but was "
              + (actor == null ? "null" : "blank"));
    }
    this.actor = actor;
  }
}
