/**
 * The PostgreSQL implementation of the inbox. Nothing here is API: it may change in any release.
 * Its classes are public only because Java cannot share package-private types across packages.
 */
package dev.inbox.internal;
