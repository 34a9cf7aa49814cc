package dev.inbox.examples;

/**
 * How hard a fault run breaks things. {@link #FULL} is the suite ({@code -Pfaults}); {@link
 * #SHORT} keeps every kind of fault at a size the default build can afford.
 *
 * @param paymentsPerBroker payments sent over Kafka and, as many again, over RabbitMQ
 * @param duplicateRate the fraction of those that are re-sends
 * @param poisonPerBroker payloads no handler can apply, which must end up dead-lettered
 * @param consumerKills kill -9 of a consumer child JVM, each restarted at once
 * @param backendTerminations pg_terminate_backend of every backend of the run's database
 * @param postgresRestarts restarts of the local PostgreSQL cluster (skipped when it is not local)
 * @param rabbitConnectionCloses forced closes of the consumers' RabbitMQ connections
 * @param kafkaRestarts stops and starts of the KRaft broker on its kept data directory
 * @param httpClients concurrent HTTP clients that retry the same keys
 * @param httpKeys distinct Idempotency-Keys the clients all send
 * @param httpServerKills kill -9 of the HTTP server, each restarted at once
 */
record FaultPlan(
    int paymentsPerBroker,
    double duplicateRate,
    int poisonPerBroker,
    int consumerKills,
    int backendTerminations,
    int postgresRestarts,
    int rabbitConnectionCloses,
    int kafkaRestarts,
    int httpClients,
    int httpKeys,
    int httpServerKills) {

  static final FaultPlan FULL = new FaultPlan(100_000, 0.2, 5, 20, 10, 1, 3, 1, 50, 1_000, 2);

  static final FaultPlan SHORT = new FaultPlan(4_000, 0.2, 2, 3, 2, 0, 1, 1, 8, 100, 1);

  int faults() {
    return consumerKills
        + backendTerminations
        + postgresRestarts
        + rabbitConnectionCloses
        + kafkaRestarts
        + httpServerKills;
  }
}
