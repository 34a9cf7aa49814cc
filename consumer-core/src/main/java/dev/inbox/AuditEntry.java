package dev.inbox;

import java.time.Instant;

/**
 * One operator's change of a key, as the audit table keeps it.
 *
 * @param id grows with every entry
 * @param at when, on the database's clock
 * @param actor who
 * @param reason why
 * @param action {@code RELEASE} or {@code SETTLE}
 * @param forced whether it took the key from a live lease
 * @param scope the scope
 * @param key the key
 * @param before the record before, as JSON (every column but the body), or null when there was none
 * @param after the record after, as JSON
 */
public record AuditEntry(
    long id,
    Instant at,
    String actor,
    String reason,
    String action,
    boolean forced,
    String scope,
    String key,
    String before,
    String after) {}
