/**
 * The operators' command line for the inbox table, against any PostgreSQL JDBC URL: {@code stats},
 * {@code list}, {@code show}, {@code release}, {@code settle} and {@code purge}, each a thin
 * command over {@link dev.inbox.InboxAdmin}. Every change is audited by the library in the same
 * transaction; nothing here writes SQL of its own.
 */
package dev.inbox.cli;
