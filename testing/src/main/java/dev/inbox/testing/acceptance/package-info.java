/**
 * The acceptance suite that every broker adapter must pass: exactly-once effects under re-sends, a
 * consumer killed with {@code kill -9} mid-stream, and the dead letters of a poison message, a
 * non-retryable failure and an invalid key. The scenarios are written once, in {@link
 * dev.inbox.testing.acceptance.ConsumerAcceptanceSuite}; an adapter's test is a thin subclass that
 * implements {@link dev.inbox.testing.acceptance.ConsumerFixture} for its broker (as
 * transaction-outbox's {@code testing} module does per database). This module does not depend on
 * the inbox or any adapter: the fixture brings the adapter, the suite brings the scenarios.
 */
package dev.inbox.testing.acceptance;
