/**
 * Micrometer meters for the HTTP adapter ({@code inbox.http.*}). Only this package needs
 * Micrometer, which is an optional dependency.
 */
package dev.inbox.http.micrometer;
