package dev.inbox.http;

/**
 * A request that passed {@link RequestMatching}: its body buffered, its key parsed, its scope
 * resolved and its fingerprint taken over that very body. Only a keyed request is ever claimed.
 */
record KeyedRequest(BufferedRequest request, String scope, String key, byte[] fingerprint) {}
