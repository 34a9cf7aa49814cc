/**
 * The Actuator endpoint {@code /actuator/inbox}: the operator's verbs of {@link
 * dev.inbox.InboxAdmin} (the same as the {@code inbox} command-line tool's) over HTTP or JMX. Reads
 * are open wherever the endpoint is exposed; writes are audited with the authenticated principal's
 * name and go through the application's own security rules for Actuator endpoints.
 */
package dev.inbox.spring.actuate;
