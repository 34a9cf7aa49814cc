/**
 * The {@code spring-kafka} benchmark: a Spring Boot application with one record
 * {@code @KafkaListener}, run with the inbox starter's interception and without it, on the same
 * workload, topic and container settings, the variants taking turns run by run. The workload and
 * its check are a copy of the benchmarks module's (that module pins Spring Framework 6.2 for its
 * peers and ships as a shaded jar, so it cannot be a dependency of a Boot 4 application).
 */
package dev.inbox.benchmarks.spring;
