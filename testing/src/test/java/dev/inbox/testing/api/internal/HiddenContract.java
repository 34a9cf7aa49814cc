package dev.inbox.testing.api.internal;

/** An internal interface, for {@code PublicApiTest}. */
public interface HiddenContract {}
