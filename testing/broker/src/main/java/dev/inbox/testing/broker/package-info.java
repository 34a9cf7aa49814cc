/**
 * The tests' KRaft broker process: {@code inbox-testing}'s {@code TestKafka} runs {@link
 * dev.inbox.testing.broker.KafkaBrokerProcess} in a child JVM on Kafka's own jars, listed in the
 * resource {@code kafka-broker.classpath} of this package, so that the broker never shares a JVM
 * with the kafka-clients under test.
 */
package dev.inbox.testing.broker;
