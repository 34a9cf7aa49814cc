package dev.inbox.spring.web;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.UUID;

/**
 * A payment written through JPA by the test endpoints; its table is created by the tests. Its id is
 * assigned, so that Hibernate defers the INSERT to the flush, as it does for most writes.
 */
@Entity
@Table(schema = "boot_web", name = "jpa_payments")
public class JpaPayment {
  @Id private String id;

  private String payer;
  private String body;

  protected JpaPayment() {}

  JpaPayment(String payer, String body) {
    this(UUID.randomUUID().toString(), payer, body);
  }

  JpaPayment(String id, String payer, String body) {
    this.id = id;
    this.payer = payer;
    this.body = body;
  }
}
