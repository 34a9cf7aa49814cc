package dev.inbox.examples;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.inbox.InboxDataSources;
import java.net.URI;
import java.net.URISyntaxException;

/** Connections to the broker of an {@code --amqp-uri}, failing with a line a person can act on. */
final class Amqp {
  private Amqp() {}

  static Connection connect(String amqpUri, String connectionName) {
    ConnectionFactory factory = factory(amqpUri);
    try {
      return factory.newConnection(connectionName);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw CommandErrors.amqp(factory, e);
    }
  }

  /**
   * The factory for the URI. A URI whose host java.net.URI cannot read (a port that is not a
   * number, for one) is refused: the client would quietly connect to localhost instead.
   */
  static ConnectionFactory factory(String amqpUri) {
    ConnectionFactory factory = new ConnectionFactory();
    try {
      if (new URI(amqpUri).getHost() == null) {
        throw new URISyntaxException(InboxDataSources.maskPasswords(amqpUri), "no host");
      }
      factory.setUri(amqpUri);
    } catch (Exception e) {
      // The exception's message quotes the URI, password and all.
      throw new IllegalArgumentException(
          "not an AMQP URI: "
              + InboxDataSources.maskPasswords(amqpUri)
              + " ("
              + e.getClass().getSimpleName()
              + ")");
    }
    return factory;
  }

  static boolean isValid(String amqpUri) {
    try {
      factory(amqpUri);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
