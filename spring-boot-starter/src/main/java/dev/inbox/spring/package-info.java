/**
 * The inbox on Spring Boot: the pieces an application may name or replace, such as {@link
 * dev.inbox.spring.SpringCallerTransactions}, which joins Spring's transactions. Everything here is
 * wired by {@code dev.inbox.spring.autoconfigure} when the starter is on the class path; every bean
 * it declares backs off when the application declares its own.
 */
package dev.inbox.spring;
