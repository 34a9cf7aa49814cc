/**
 * Micrometer metrics for the inbox; needs {@code io.micrometer:micrometer-core} on the class path.
 */
package dev.inbox.micrometer;
