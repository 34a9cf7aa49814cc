package dev.inbox.rabbit;

import com.rabbitmq.client.Delivery;
import java.sql.Connection;

/**
 * The work done once per new delivery, inside the inbox's transaction. Write through the given
 * connection so that the writes commit together with the delivery's key. Never commit, roll back or
 * close it. Throw to have the delivery retried, up to {@code maxAttempts}.
 */
@FunctionalInterface
public interface DeliveryHandler {
  void handle(Delivery delivery, Connection transaction) throws Exception;
}
