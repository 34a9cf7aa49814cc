/**
 * The PostgreSQL implementation of the inbox. Nothing here is API: it may change in any release.
 * Its classes are public only because Java cannot share package-private types across packages.
 *
 * <p>The state machine of a key's record is one file, {@code StateMachine}: the states, every
 * transition the SQL makes with its guard, the give-up rule, and what a claim answers for a row.
 * The table's migration ({@code V1__create_inbox_table.sql}) cannot point there itself: Flyway
 * checksums its text, comments included, so its comment still names {@code dev.inbox.Inbox}.
 *
 * <p>The partitioned storage ({@code docs/scale.md}) changes only the upserts' conflict targets
 * ({@code PartitionedStatements}) and replaces the purge by the rotation and retention of
 * generations ({@code Generations}); its key guard is a trigger of its migration.
 */
package dev.inbox.internal;
