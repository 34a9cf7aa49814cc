package dev.inbox;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 fingerprints of requests, so that a key reused for a different request is detected. */
public final class Fingerprints {
  private Fingerprints() {}

  /** The SHA-256 of the bytes. */
  public static byte[] sha256(byte[] bytes) {
    return newDigest().digest(bytes);
  }

  /** The SHA-256 of the UTF-8 bytes of the text. */
  public static byte[] sha256(String text) {
    return sha256(text.getBytes(StandardCharsets.UTF_8));
  }

  /** A fresh SHA-256 digest, for callers that feed several parts. */
  public static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform must support SHA-256", e);
    }
  }
}
